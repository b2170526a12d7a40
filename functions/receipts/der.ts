/**
 * ECDSA signatures: KMS answers DER (`SEQUENCE { INTEGER r, INTEGER s }`, X9.62), JOSE wants the
 * raw r‖s, each left-padded to the curve's size (RFC 7518 §3.4: 64 bytes for P-256). A DER integer
 * carries a leading 0x00 when its top bit is set and drops leading zero bytes otherwise, so the two
 * halves are 31 to 33 bytes long: both are normalised to exactly 32.
 */

/** The raw r‖s (2 × `size` bytes) of a DER-encoded ECDSA signature; throws on anything else. */
export function derToJose(der: Uint8Array, size = 32): Uint8Array {
  let at = 0;
  const byte = () => {
    const b = der[at++];
    if (b === undefined) throw new Error('ECDSA signature: truncated DER');
    return b;
  };
  const length = () => {
    const first = byte();
    if (first < 0x80) return first;
    const count = first & 0x7f;
    if (count === 0 || count > 2) throw new Error('ECDSA signature: bad DER length');
    let n = 0;
    for (let i = 0; i < count; i++) n = (n << 8) | byte();
    return n;
  };
  if (byte() !== 0x30) throw new Error('ECDSA signature: not a DER sequence');
  const total = length();
  if (total !== der.length - at) throw new Error('ECDSA signature: DER sequence length does not match');
  const out = new Uint8Array(2 * size);
  for (const half of [0, 1]) {
    if (byte() !== 0x02) throw new Error('ECDSA signature: not a DER integer');
    const len = length();
    let value = der.subarray(at, at + len);
    if (value.length !== len) throw new Error('ECDSA signature: truncated DER integer');
    at += len;
    while (value.length > 0 && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new Error('ECDSA signature: integer larger than the curve');
    out.set(value, half * size + (size - value.length));
  }
  if (at !== der.length) throw new Error('ECDSA signature: trailing bytes after the DER sequence');
  return out;
}
