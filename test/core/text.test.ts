import { nameSkeleton } from '../../functions/core/name-skeleton';
import { descriptionProblem, nameProblem } from '../../functions/core/text';

describe('agent names', () => {
  it.each([
    ['Cyrillic а in place of a', 'weather-bot', 'wеather-bot'],
    ['fullwidth letters', 'weather', 'ｗｅａｔｈｅｒ'],
    ['case', 'Weather-Bot', 'weather-bot'],
    ['digit one for l', 'paypal', 'paypa1'],
    ['capital I for l', 'paypal', 'paypaI'],
    ['digit zero for o', 'bot', 'b0t'],
    ['rn for m', 'microsoft', 'rnicrosoft'],
    ['a Unicode hyphen for -', 'weather-bot', 'weather\u2010bot'],
    ['Cherokee W', 'Weather', 'Ꮃeather'],
  ])('gives look-alikes one skeleton: %s', (_, a, b) => {
    expect(nameSkeleton(a)).toBe(nameSkeleton(b));
  });

  it('keeps names that read differently apart', () => {
    expect(nameSkeleton('weather-bot')).not.toBe(nameSkeleton('weather-bots'));
    expect(nameSkeleton('alpha')).not.toBe(nameSkeleton('aloha'));
  });

  it.each([
    ['a zero-width space', 'weather\u200bbot'],
    ['a zero-width joiner', 'weather\u200dbot'],
    ['a right-to-left override', 'weather\u202ebot'],
    ['a soft hyphen', 'weather\u00adbot'],
    ['a NUL', 'weather\u0000bot'],
    ['a C1 control', 'weather\u0085bot'],
  ])('refuses a name with %s', (_, name) => {
    expect(nameProblem(name)).toBe('must not contain invisible or control characters');
  });

  it('refuses a lone surrogate in a name', () => {
    expect(nameProblem('bot\ud800')).toBe('must be well-formed unicode text');
  });

  it('accepts names in any script', () => {
    for (const name of ['météo-bot', 'погода', '天気ボット', 'weather bot 2']) expect(nameProblem(name)).toBeUndefined();
  });
});

describe('charge descriptions', () => {
  it.each([
    ['a newline', 'line\nbreak', 'must not contain control characters'],
    ['a tab', 'a\tb', 'must not contain control characters'],
    ['an escape (terminal colours)', '\u001b[31mred', 'must not contain control characters'],
    ['a right-to-left override (Trojan Source)', 'pay \u202e01.0$', 'must not contain bidirectional control characters'],
    ['a left-to-right isolate', 'a\u2066b', 'must not contain bidirectional control characters'],
    ['a right-to-left mark', 'a\u200fb', 'must not contain bidirectional control characters'],
    ['a lone high surrogate', 'x\ud83d', 'must be well-formed unicode text'],
    ['a lone low surrogate', '\ude00x', 'must be well-formed unicode text'],
  ])('refuses %s', (_, text, message) => {
    expect(descriptionProblem(text)).toBe(message);
  });

  it('accepts ordinary text in any script, emoji included', () => {
    for (const text of ['forecast for Lisbon', 'прогноз', 'تقرير الطقس', '🌦️ forecast', ''])
      expect(descriptionProblem(text)).toBeUndefined();
  });
});
