/**
 * Agent names that look the same may not both be registered (core/text.ts has the other rules for
 * names). Its own module so that only the functions that reserve names bundle the look-alike table.
 */
import { remove as removeConfusables } from 'confusables';

/**
 * A look-alike skeleton in the spirit of Unicode TR39: two names with the same skeleton look the
 * same to a reader, so only one of them may be registered. NFKC folds compatibility forms
 * (fullwidth, ligatures); the `confusables` table maps look-alikes from other scripts to Latin
 * (Cyrillic а → a); then the ASCII confusions TR39 also lists (1 I | → l, 0 → o, rn → m, vv → w),
 * every dash to '-', and case.
 */
export function nameSkeleton(name: string): string {
  return removeConfusables(name.normalize('NFKC'))
    .replace(/\p{Pd}/gu, '-')
    .replace(/[1I|]/g, 'l')
    .toLowerCase()
    .replace(/0/g, 'o')
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w');
}
