/* Kessai card rules in plain JavaScript: the widget frame's fallback while
 * the Go WebAssembly (wasm/widget) is not running, loaded before widget.js.
 *
 * This is a line-by-line port of the Go packages wasm/card (brand from the
 * BIN, Luhn, lengths, grouping and caret, expiry, security code and
 * cardholder rules) and wasm/widget/field (the expiry field's rewriting, a
 * konbini shopper's phone number),
 * and it must answer exactly as they do: the browser suite's
 * cardrules.test.mjs runs it against the vectors those packages write
 * (wasm/card/testdata/vectors.json, wasm/widget/field/testdata/vectors.json).
 * Change a rule there first, regenerate the vectors, then follow here.
 *
 * Go reads strings as code points, JavaScript as UTF-16 units; here every
 * rule walks code points, and "white space" is Go's unicode.IsSpace, not
 * JavaScript's \s or trim() (they differ on U+0085 and U+FEFF).
 *
 * No DOM: it defines window.KessaiCard in a browser and runs as is in
 * Node's vm for the tests. States are the Go package's strings. */
(function (global) {
  "use strict";

  // Unicode letters and marks, as unicode.IsLetter and unicode.IsMark see
  // them. The engine's tables may be newer than Go's; only characters Go
  // does not know yet can differ (the vectors check that).
  var LETTER, MARK, DASH;
  try {
    LETTER = new RegExp("^\\p{L}$", "u");
    MARK = new RegExp("^\\p{M}$", "u");
    DASH = new RegExp("^\\p{Pd}$", "u");
  } catch (e) {
    return; // no Unicode property escapes: leave the fields to the WebAssembly and the server
  }

  var S = {
    REQUIRED: "REQUIRED_VALUE",
    INVALID_NUMBER: "INVALID_CARD_NUMBER",
    INVALID_EXPIRY: "INVALID_CARD_EXPIRATION",
    INVALID_CVV: "INVALID_CVV",
    INVALID_FORMAT: "INVALID_FORMAT",
    INCOMPLETE_NUMBER: "INCOMPLETE_CARD_NUMBER",
    INCOMPLETE_EXPIRY: "INCOMPLETE_CARD_EXPIRATION",
    INCOMPLETE_CVV: "INCOMPLETE_CVV",
    EXPIRED: "CARD_EXPIRED",
    INVALID_PHONE: "INVALID_PHONE_NUMBER",
    FOREIGN_PHONE: "ONLY_JAPANESE_PHONE_NUMBER_ALLOWED"
  };
  var MAX_CARDHOLDER_LENGTH = 64;
  var MAX_YEARS_AHEAD = 20;
  var EXPIRY_SEPARATOR = " / ";
  var GENERIC_MESSAGE_KEY = "field.generic";

  var VISA = "visa", MASTERCARD = "mastercard", JCB = "jcb", AMEX = "american_express", DINERS = "diners_club",
    DISCOVER = "discover", UNIONPAY = "unionpay", MAESTRO = "maestro", UNKNOWN = "unknown";

  // ---- characters ----------------------------------------------------

  // codePoints returns the code points of s. A lone surrogate stays as it
  // is: like the U+FFFD Go receives for it, it is no digit, letter, mark or
  // space, so every rule answers for it as Go does for U+FFFD.
  function codePoints(s) {
    s = String(s);
    var out = [];
    for (var i = 0; i < s.length; i++) {
      var c = s.charCodeAt(i);
      if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.length) {
        var n = s.charCodeAt(i + 1);
        if (n >= 0xDC00 && n <= 0xDFFF) {
          out.push((c - 0xD800) * 0x400 + (n - 0xDC00) + 0x10000);
          i++;
          continue;
        }
      }
      out.push(c);
    }
    return out;
  }

  // digitValue: 0–9 and the full-width ０–９ are digits, nothing else.
  function digitValue(r) {
    if (r >= 0x30 && r <= 0x39) { return r - 0x30; }
    if (r >= 0xFF10 && r <= 0xFF19) { return r - 0xFF10; }
    return -1;
  }

  // isSpace is Go's unicode.IsSpace.
  function isSpace(r) {
    if (r <= 0xFF) { return (r >= 0x09 && r <= 0x0D) || r === 0x20 || r === 0x85 || r === 0xA0; }
    return r === 0x1680 || (r >= 0x2000 && r <= 0x200A) || r === 0x2028 || r === 0x2029 || r === 0x202F ||
      r === 0x205F || r === 0x3000;
  }

  function is(re, r) { return re.test(String.fromCodePoint(r)); }

  // trimSpace is Go's strings.TrimSpace (every space is in the BMP).
  function trimSpace(s) {
    s = String(s);
    var i = 0, j = s.length;
    while (i < j && isSpace(s.charCodeAt(i))) { i++; }
    while (j > i && isSpace(s.charCodeAt(j - 1))) { j--; }
    return s.slice(i, j);
  }

  // digits returns the digits of s as ASCII and drops everything else.
  function digits(s) {
    s = String(s);
    if (/^[0-9]*$/.test(s)) { return s; } // the common case after the first call
    var cps = codePoints(s), out = [];
    for (var i = 0; i < cps.length; i++) {
      var v = digitValue(cps[i]);
      if (v >= 0) { out.push(v); }
    }
    return out.join("");
  }

  function isNumberSeparator(r) {
    return isSpace(r) || is(DASH, r) || r === 0x2212 || r === 0x30FC;
  }

  // ---- brands ----------------------------------------------------------

  var BIN_WIDTH = 6;
  var POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000];
  // [lo, hi, width, brand]: the wider prefix wins where ranges nest.
  var RANGES = [
    [4, 4, 1, VISA],
    [51, 55, 2, MASTERCARD], [2221, 2720, 4, MASTERCARD],
    [3528, 3589, 4, JCB],
    [34, 34, 2, AMEX], [37, 37, 2, AMEX],
    [300, 305, 3, DINERS], [3095, 3095, 4, DINERS], [36, 36, 2, DINERS], [38, 39, 2, DINERS],
    [6011, 6011, 4, DISCOVER], [644, 649, 3, DISCOVER], [65, 65, 2, DISCOVER], [622126, 622925, 6, DISCOVER],
    [62, 62, 2, UNIONPAY], [81, 81, 2, UNIONPAY],
    [50, 50, 2, MAESTRO], [56, 58, 2, MAESTRO], [6304, 6304, 4, MAESTRO], [6390, 6390, 4, MAESTRO],
    [6759, 6759, 4, MAESTRO], [6761, 6763, 4, MAESTRO], [676770, 676770, 6, MAESTRO], [676774, 676774, 6, MAESTRO]
  ];

  function spanLo(r) { return r[0] * POW10[BIN_WIDTH - r[2]]; }
  function spanHi(r) { return (r[1] + 1) * POW10[BIN_WIDTH - r[2]] - 1; }

  function brandAt(v) {
    var best = UNKNOWN, width = 0;
    for (var i = 0; i < RANGES.length; i++) {
      var r = RANGES[i];
      if (spanLo(r) <= v && v <= spanHi(r) && r[2] > width) { best = r[3]; width = r[2]; }
    }
    return best;
  }

  // detectBrand gives a prefix a brand only once every number it can grow
  // into has that brand.
  function detectBrand(number) {
    var d = digits(number);
    if (!d) { return UNKNOWN; }
    if (d.length > BIN_WIDTH) { d = d.slice(0, BIN_WIDTH); }
    var m = POW10[BIN_WIDTH - d.length];
    var first = parseInt(d, 10) * m, last = (parseInt(d, 10) + 1) * m - 1;
    var b = brandAt(first);
    for (var i = 0; i < RANGES.length; i++) {
      var lo = spanLo(RANGES[i]), hi = spanHi(RANGES[i]);
      if (first < lo && lo <= last && brandAt(lo) !== b) { return UNKNOWN; }
      if (first <= hi && hi < last && brandAt(hi + 1) !== b) { return UNKNOWN; }
    }
    return b;
  }

  function validLength(b, n) {
    switch (b) {
      case VISA: return n === 13 || n === 16 || n === 19;
      case MASTERCARD: return n === 16;
      case AMEX: return n === 15;
      case DINERS: return n >= 14 && n <= 19;
      case JCB: case DISCOVER: case UNIONPAY: return n >= 16 && n <= 19;
    }
    return n >= 12 && n <= 19; // maestro, unknown
  }
  function minLength(b) {
    for (var n = 0; n < 32; n++) { if (validLength(b, n)) { return n; } }
    return 0;
  }
  function maxLength(b) {
    for (var n = 31; n > 0; n--) { if (validLength(b, n)) { return n; } }
    return 0;
  }
  function cvvLength(b) { return b === AMEX ? 4 : 3; }
  function known(b) {
    switch (b) {
      case VISA: case MASTERCARD: case JCB: case AMEX: case DINERS: case DISCOVER: case UNIONPAY: case MAESTRO:
        return true;
    }
    return false;
  }

  // ---- the number ------------------------------------------------------

  function luhn(number) {
    var d = digits(number);
    if (!d) { return false; }
    var sum = 0, double = false;
    for (var i = d.length - 1; i >= 0; i--) {
      var n = d.charCodeAt(i) - 48;
      if (double) { n *= 2; if (n > 9) { n -= 9; } }
      sum += n;
      double = !double;
    }
    return sum % 10 === 0;
  }

  // numberState: "" valid, REQUIRED, INCOMPLETE_NUMBER or INVALID_NUMBER
  // (a wrong length, the Luhn check, or anything but digits and separators).
  function numberState(number) {
    var cps = codePoints(number);
    for (var i = 0; i < cps.length; i++) {
      if (digitValue(cps[i]) < 0 && !isNumberSeparator(cps[i])) { return S.INVALID_NUMBER; }
    }
    var d = digits(number);
    if (!d) { return S.REQUIRED; }
    var b = detectBrand(d), n = d.length;
    if (n < minLength(b)) { return S.INCOMPLETE_NUMBER; }
    if (validLength(b, n) && luhn(d)) { return ""; }
    if (validLength(b, n)) { return S.INVALID_NUMBER; }
    if (n < maxLength(b)) { return S.INCOMPLETE_NUMBER; }
    return S.INVALID_NUMBER;
  }

  // clamp cuts the digits to the longest length the brand allows.
  function clamp(number) {
    var d = digits(number), m = maxLength(detectBrand(d));
    return d.length > m ? d.slice(0, m) : d;
  }

  function groups(b, n) {
    if (b === AMEX) { return [4, 6, 5]; }
    if (b === DINERS && n <= 14) { return [4, 6, 4]; }
    return [4, 4, 4, 4, 3];
  }
  function spaceBefore(gs, i) {
    if (i <= 0) { return false; }
    var end = 0;
    for (var k = 0; k < gs.length; k++) {
      end += gs[k];
      if (i === end) { return true; }
      if (i < end) { return false; }
    }
    return (i - end) % 4 === 0;
  }

  // format groups the digits as the brand prints them.
  function format(number) {
    var d = digits(number), gs = groups(detectBrand(d), d.length), out = [];
    for (var i = 0; i < d.length; i++) {
      if (spaceBefore(gs, i)) { out.push(" "); }
      out.push(d.charAt(i));
    }
    return out.join("");
  }

  // formatCaret: where the caret goes in format(number) after digitIndex digits.
  function formatCaret(number, digitIndex) {
    var d = digits(number);
    if (digitIndex <= 0) { return 0; }
    if (digitIndex > d.length) { digitIndex = d.length; }
    var gs = groups(detectBrand(d), d.length), pos = digitIndex;
    for (var i = 1; i < digitIndex; i++) { if (spaceBefore(gs, i)) { pos++; } }
    return pos;
  }

  // digitIndex: how many digits of input come before caret (UTF-16 units).
  function digitIndex(input, caret) {
    var cps = codePoints(input), units = 0, n = 0;
    for (var i = 0; i < cps.length; i++) {
      var w = cps[i] > 0xFFFF ? 2 : 1;
      if (units + w > caret) { break; }
      units += w;
      if (digitValue(cps[i]) >= 0) { n++; }
    }
    return n;
  }

  // ---- security code and cardholder -------------------------------------

  function cvvState(cvv, b) {
    cvv = trimSpace(cvv);
    if (!cvv) { return S.REQUIRED; }
    var cps = codePoints(cvv);
    for (var i = 0; i < cps.length; i++) {
      if (digitValue(cps[i]) < 0) { return S.INVALID_CVV; }
    }
    var lo = cvvLength(b), hi = lo;
    if (!known(b)) { lo = 3; hi = 4; }
    if (cps.length < lo) { return S.INCOMPLETE_CVV; }
    if (cps.length > hi) { return S.INVALID_CVV; }
    return "";
  }

  // cardholderState: 1–64 characters (code points) of letters with their
  // marks, spaces, dots, hyphens and apostrophes, at least one letter.
  function cardholderState(name) {
    name = trimSpace(name);
    if (!name) { return S.REQUIRED; }
    // More than 128 UTF-16 units are more than 64 code points whatever they are.
    if (name.length > 2 * MAX_CARDHOLDER_LENGTH) { return S.INVALID_FORMAT; }
    var cps = codePoints(name);
    if (cps.length > MAX_CARDHOLDER_LENGTH) { return S.INVALID_FORMAT; }
    var letter = false;
    for (var i = 0; i < cps.length; i++) {
      var r = cps[i];
      if (is(LETTER, r)) { letter = true; continue; }
      if (is(MARK, r)) { continue; }
      switch (r) {
        case 0x20: case 0x3000: case 0x2E: case 0x2D: case 0x27: case 0x2019: case 0x30FB:
          continue;
      }
      return S.INVALID_FORMAT;
    }
    return letter ? "" : S.INVALID_FORMAT;
  }

  // ---- expiry ------------------------------------------------------------

  function isExpirySeparator(r) {
    switch (r) {
      case 0x2F: case 0xFF0F: case 0x2D: case 0xFF0D: case 0x2E:
        return true;
    }
    return isSpace(r);
  }

  // expiryFields splits s into its runs of digits; null if s holds anything
  // else than digits and separators. trailing: s ends in a separator.
  function expiryFields(s) {
    var cps = codePoints(s), buf = [];
    for (var i = 0; i < cps.length; i++) {
      var v = digitValue(cps[i]);
      if (v >= 0) { buf.push(v); continue; }
      if (!isExpirySeparator(cps[i])) { return null; }
      buf.push(" ");
    }
    return {
      fields: buf.join("").split(" ").filter(function (f) { return f !== ""; }),
      trailing: cps.length > 0 && digitValue(cps[cps.length - 1]) < 0
    };
  }

  function parseMonth(s) {
    if (s.length < 1 || s.length > 2) { return 0; }
    var m = parseInt(s, 10);
    return m >= 1 && m <= 12 ? m : 0;
  }
  function parseYear(s) {
    if (s.length === 2) { return 2000 + parseInt(s, 10); }
    if (s.length === 4 && s.charAt(0) !== "0") { return parseInt(s, 10); }
    return 0;
  }

  // parseExpiry reads "MM/YY", "MMYY", "MM/YYYY", "MMYYYY", "M/YY" and the
  // like: {month, year} with a four-digit year, or null.
  function parseExpiry(s) {
    var f = expiryFields(s), ms, ys;
    if (!f) { return null; }
    f = f.fields;
    if (f.length === 1 && (f[0].length === 4 || f[0].length === 6)) { ms = f[0].slice(0, 2); ys = f[0].slice(2); }
    else if (f.length === 2) { ms = f[0]; ys = f[1]; }
    else { return null; }
    var month = parseMonth(ms), year = parseYear(ys);
    return month && year ? { month: month, year: year } : null;
  }

  function normalizeYear(year) { return year >= 0 && year <= 99 ? 2000 + year : year; }

  // now is a Date; its calendar month in the browser's time zone decides,
  // as time.Now() does in the WebAssembly.
  function yearInWindow(year, now) {
    var y = normalizeYear(year), ny = now.getFullYear();
    return ny <= y && y <= ny + MAX_YEARS_AHEAD;
  }
  function expired(month, year, now) {
    var ny = now.getFullYear();
    return year < ny || (year === ny && month < now.getMonth() + 1);
  }
  function validExpiry(month, year, now) {
    if (month < 1 || month > 12 || !yearInWindow(year, now)) { return false; }
    return !expired(month, normalizeYear(year), now);
  }

  function expiryIncomplete(s) {
    var f = expiryFields(s);
    if (!f) { return false; }
    var fs = f.fields;
    if (fs.length === 1) {
      var d = fs[0];
      if (f.trailing) { return parseMonth(d) > 0; }
      if (d.length === 1) { return true; }
      if (d.length > 5) { return false; }
      return parseMonth(d.slice(0, 2)) > 0;
    }
    if (fs.length === 2) {
      return parseMonth(fs[0]) > 0 && (fs[1].length === 1 || fs[1].length === 3);
    }
    return false;
  }

  // expiryState: "" valid, REQUIRED, INCOMPLETE_EXPIRY, EXPIRED or INVALID_EXPIRY.
  function expiryState(expiry, now) {
    if (!trimSpace(expiry)) { return S.REQUIRED; }
    var p = parseExpiry(expiry);
    if (!p) { return expiryIncomplete(expiry) ? S.INCOMPLETE_EXPIRY : S.INVALID_EXPIRY; }
    if (expired(p.month, p.year, now)) { return S.EXPIRED; }
    if (!validExpiry(p.month, p.year, now)) { return S.INVALID_EXPIRY; }
    return "";
  }

  // ---- the fields (wasm/widget/field) -------------------------------------

  function two(n) { return String(Math.floor(n / 10) % 10) + String(n % 10); }

  function separatorAfterDigits(v) {
    var cps = codePoints(v), seen = false;
    for (var i = 0; i < cps.length; i++) {
      var r = cps[i];
      if (digitValue(r) >= 0) { seen = true; continue; }
      if (seen && (r === 0x2F || r === 0x2D || r === 0x2E || r === 0x20 || r === 0x3000 || r === 0xFF0F)) { return true; }
    }
    return false;
  }

  // formatExpiry rewrites the expiry field as "MM / YY" while the customer
  // types; deleting: the edit removed text, so no separator is added.
  function formatExpiry(v, deleting) {
    var d = digits(v);
    if (d.length > 4) {
      var p = parseExpiry(v);
      if (p) { return two(p.month) + EXPIRY_SEPARATOR + two(p.year % 100); }
      d = d.slice(0, 4);
    }
    if (d.length === 0) { return ""; }
    if (d.length === 1) {
      if (deleting) { return d; }
      if (d > "1") { return "0" + d + EXPIRY_SEPARATOR; }
      if (d !== "0" && separatorAfterDigits(v)) { return "0" + d + EXPIRY_SEPARATOR; }
      return d;
    }
    if (d.charAt(0) === "1" && d.charAt(1) > "2") { d = ("0" + d).slice(0, 4); }
    if (d.length === 2) { return deleting ? d : d + EXPIRY_SEPARATOR; }
    return d.slice(0, 2) + EXPIRY_SEPARATOR + d.slice(2);
  }

  // caretAfterDigits: the position just after the k-th ASCII digit of s.
  function caretAfterDigits(s, k) {
    if (k <= 0) { return 0; }
    var n = 0;
    for (var i = 0; i < s.length; i++) {
      var c = s.charCodeAt(i);
      if (c >= 48 && c <= 57 && ++n === k) { return i + 1; }
    }
    return s.length;
  }

  // messageKey names the text of a field's state among the frame's
  // messages: "<field>.<kind>" (field: number, exp, cvc or name), "" for no
  // problem, the generic one for a state without a text of its own.
  function messageKey(field, state) {
    switch (state) {
      case "": return "";
      case S.REQUIRED: return field + ".required";
      case S.INCOMPLETE_NUMBER: case S.INCOMPLETE_EXPIRY: case S.INCOMPLETE_CVV: return field + ".incomplete";
      case S.EXPIRED: return field + ".expired";
      case S.INVALID_NUMBER: case S.INVALID_EXPIRY: case S.INVALID_CVV: case S.INVALID_FORMAT: case S.INVALID_PHONE:
        return field + ".invalid";
      case S.FOREIGN_PHONE: return field + ".foreign";
    }
    return GENERIC_MESSAGE_KEY;
  }

  // ---- a konbini shopper's phone number (field.JapanesePhone) ----------

  function isPhoneSeparator(r) {
    return r === 0x2212 || r === 0x30FC || r === 0xFF70 || r === 0x28 || r === 0x29 || r === 0xFF08 || r === 0xFF09 || is(DASH, r);
  }
  // japanesePhone: {local, state}; local is the digits to send with
  // country code 81, "" unless state is "".
  function japanesePhone(v) {
    var cps = codePoints(v), d = "", plus = false, blank = true;
    function no(state) { return { local: "", state: state }; }
    for (var i = 0; i < cps.length; i++) {
      var r = cps[i], x = digitValue(r);
      if (x >= 0) { d += String(x); blank = false; continue; }
      if (isSpace(r)) { continue; }
      if ((r === 0x2B || r === 0xFF0B) && !plus && d === "") { plus = true; blank = false; continue; }
      if (isPhoneSeparator(r)) { blank = false; continue; }
      return no(S.INVALID_PHONE);
    }
    if (blank) { return no(S.REQUIRED); }
    if (plus) {
      if (d === "") { return no(S.INVALID_PHONE); }
      if (d.slice(0, 2) !== "81") { return no(S.FOREIGN_PHONE); }
      d = d.slice(2);
      if (d.charAt(0) !== "0") { d = "0" + d; }
    }
    var lo = 9, hi = 10;
    if (d.charAt(0) === "0") { lo = 10; hi = 11; }
    if (d.length < lo || d.length > hi) { return no(S.INVALID_PHONE); }
    return { local: d, state: "" };
  }

  function cvvMax(b) { return b === UNKNOWN || b === "" ? 4 : cvvLength(b); }
  function autoAdvance(b, n) { return n === maxLength(b) || n === 16; }

  global.KessaiCard = {
    states: S,
    unknown: UNKNOWN,
    amex: AMEX,
    maxCardholderLength: MAX_CARDHOLDER_LENGTH,
    digits: digits,
    luhn: luhn,
    detectBrand: detectBrand,
    validLength: validLength,
    minLength: minLength,
    maxLength: maxLength,
    cvvLength: cvvLength,
    known: known,
    numberState: numberState,
    clamp: clamp,
    format: format,
    formatCaret: formatCaret,
    digitIndex: digitIndex,
    cvvState: cvvState,
    cardholderState: cardholderState,
    parseExpiry: parseExpiry,
    normalizeYear: normalizeYear,
    validExpiry: validExpiry,
    expiryState: expiryState,
    formatExpiry: formatExpiry,
    caretAfterDigits: caretAfterDigits,
    cvvMax: cvvMax,
    autoAdvance: autoAdvance,
    messageKey: messageKey,
    japanesePhone: japanesePhone,
    genericMessageKey: GENERIC_MESSAGE_KEY
  };
})(this);
