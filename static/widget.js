/* Kessai widget frame script (runs inside the frame, on the gateway's
 * origin). It speaks the loader protocol, calls the API on its own origin,
 * and formats/validates the card fields by the card rules of the Go
 * WebAssembly (wasm/widget) once it is ready, and by their plain-JavaScript
 * port (static/cardrules.js) until then or when it cannot run.
 *
 * Protocol: every message is {source: "kessai-checkout", v: 1, type,
 * instance, ...}, posted to the embedding page's origin only (never "*"),
 * and only messages from that origin and from window.parent are read.
 *   frame → page: ready, resize {height}, token-created {tokenId},
 *                 success {response, tokenId, chargeId, subscriptionId?,
 *                 status, requestId?},
 *                 error {code, message, fatal, requestId?}, close
 *   page → frame: submit {requestId}, focus
 * The page gets ids and states, never card data.
 *
 * Besides the card form the frame may offer online wallets (cfg.wallets:
 * buttons that pay at once) and the forms of a konbini payment and of a
 * bank transfer (cfg.methods: the forms to switch between), and it carries
 * the steps a shopper takes elsewhere: a 3-D Secure challenge (the
 * issuer's page in an inner frame, or, on the gateway's own link form, the
 * whole tab, which comes back to cfg.returnUrl) and a wallet payment (the
 * wallet page's QR code and a link to it), while it polls the charge to
 * its end. A konbini payment or a bank transfer is paid later, away from
 * the screen: once its charge awaits the shopper, the frame shows what to
 * pay with (the store's numbers, the account) and the deadline, and
 * reports success with the charge, status "awaiting"; the loader keeps
 * the modal open on them until the shopper closes it.
 *
 * A subscription checkout (cfg.subscription) makes a subscription on the
 * token instead of a charge, and follows its first charge, when one is
 * due now, exactly as a payment's: the same polling, the same challenge,
 * the same messages for a decline, which the shopper may retry. */
(function () {
  "use strict";
  var d = document;
  var root = d.documentElement;
  var cfgEl = d.getElementById("kw-config");
  if (!cfgEl) { return; }
  var cfg;
  try { cfg = JSON.parse(cfgEl.textContent); } catch (e) { return; }
  root.classList.add("js");
  var SOURCE = "kessai-checkout";
  var VERSION = 1;
  var parentWin = window.parent !== window ? window.parent : null;
  var embedded = !!(parentWin && cfg.origin);
  var M = cfg.messages || {};

  function post(type, data) {
    if (!embedded) { return; }
    var msg = { source: SOURCE, v: VERSION, type: type, instance: cfg.instance || "" };
    if (data) { for (var k in data) { if (Object.prototype.hasOwnProperty.call(data, k)) { msg[k] = data[k]; } } }
    try { parentWin.postMessage(msg, cfg.origin); } catch (e) { /* the page went away */ }
  }

  var main = d.getElementById("kw");
  var lastHeight = 0;
  function reportHeight() {
    if (!main) { return; }
    var h = Math.ceil(main.getBoundingClientRect().height);
    if (h !== lastHeight) { lastHeight = h; post("resize", { height: h }); }
  }
  function watchHeight() {
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(reportHeight).observe(main);
    } else {
      window.addEventListener("resize", reportHeight);
      setInterval(reportHeight, 500);
    }
    reportHeight();
  }

  var closeBtn = d.getElementById("kw-close");
  if (closeBtn) {
    closeBtn.addEventListener("click", function () { post("close"); });
    closeBtn.hidden = !embedded; // nothing to close when the frame is the page
  }
  d.addEventListener("keydown", function (e) {
    if ((e.key === "Escape" || e.key === "Esc") && !cfg.inline) { post("close"); }
  });

  // The error page: tell the loader, show the message, nothing else.
  if (cfg.error) {
    post("ready", {});
    post("error", { code: cfg.error.code, message: cfg.error.message, fatal: true });
    watchHeight();
    return;
  }

  var form = d.getElementById("kw-form");
  var payBtn = d.getElementById("kw-pay");
  var payLabel = d.getElementById("kw-pay-label");
  var alertBox = d.getElementById("kw-alert");
  var done = d.getElementById("kw-done");
  var F = {
    email: d.getElementById("kw-email"),
    number: d.getElementById("kw-number"),
    exp: d.getElementById("kw-exp"),
    cvc: d.getElementById("kw-cvc"),
    name: d.getElementById("kw-name"),
    // A konbini payment's and a bank transfer's.
    store: d.getElementById("kw-store"),
    cname: d.getElementById("kw-cname"),
    phone: d.getElementById("kw-phone"),
    bank: d.getElementById("kw-bank")
  };
  var payText = payLabel ? payLabel.textContent : "";
  // method is the form shown (card, konbini or bank_transfer; null when
  // there are only wallets); SLIPS are the methods paid away from the
  // screen.
  var method = (cfg.methods || [])[0] || null;
  var SLIPS = { konbini: true, bank_transfer: true };
  var S = cfg.slip || {};
  var switchInputs = d.querySelectorAll(".kw-switch-input");
  var slipBox = d.getElementById("kw-slip");
  var testHint = d.getElementById("kw-test");
  var methods = d.getElementById("kw-methods");
  var walletBtns = d.querySelectorAll(".kw-wallet");
  var walletBox = d.getElementById("kw-wallet");
  var acsBox = d.getElementById("kw-3ds");
  var acs = d.getElementById("kw-acs");
  var WALLETS = {};
  (cfg.wallets || []).forEach(function (w) { WALLETS[w.brand] = w.name; });
  function fill(text, name) { return String(text || "").replace("%s", name); }

  // ---- field helpers -------------------------------------------------
  function wrapOf(el) { return el.closest(".kw-field"); }
  function errOf(el) { return d.getElementById(el.id + "-err"); }
  function showError(el, msg) {
    var w = wrapOf(el), s = errOf(el);
    if (msg) {
      el.setAttribute("aria-invalid", "true");
      w.classList.add("is-invalid");
      if (s.textContent !== msg) { s.textContent = msg; }
    } else {
      el.removeAttribute("aria-invalid");
      w.classList.remove("is-invalid");
      s.textContent = "";
    }
  }
  function isInvalid(el) { return wrapOf(el).classList.contains("is-invalid"); }

  // Digits, with full-width digits (a Japanese IME's) as their ASCII: what
  // is sent of the number and the code, as Go's card.Digits keeps them.
  function digits(s) {
    return String(s).replace(/[\uFF10-\uFF19]/g, function (c) {
      return String.fromCharCode(c.charCodeAt(0) - 0xFF10 + 48);
    }).replace(/\D/g, "");
  }

  // ---- the card fields ------------------------------------------------
  // C is the card rules the fields follow: the Go WebAssembly's (wasm/card
  // and wasm/widget/field, wasmRules below) once it is ready, until then or
  // without it static/cardrules.js, their port held to the same vectors.
  // The two answer alike, so the shopper sees the same formatting, brand,
  // focus moves and messages either way; null when neither has arrived.
  var C = window.KessaiCard || null;
  var brand = "unknown", numberDigits = 0;
  var brandImg = d.getElementById("kw-brand");

  function caretOf(el, v) { return el.selectionStart == null ? v.length : el.selectionStart; }
  function place(el, pos) {
    if (d.activeElement === el) {
      try { el.setSelectionRange(pos, pos); } catch (e) { /* type without selection */ }
    }
  }
  function typing(e) { return e.inputType === "insertText"; }
  function deleting(e) { return /^delete/.test(e.inputType || ""); }
  function setComplete(el, ok) { wrapOf(el).classList.toggle("is-complete", ok); }

  // cardState judges one card field as it stands.
  function cardState(el) {
    if (el === F.number) { return C.numberState(el.value); }
    if (el === F.exp) { return C.expiryState(el.value, new Date()); }
    if (el === F.cvc) { return C.cvvState(el.value, brand); }
    return C.cardholderState(el.value);
  }
  // cardCheck shows the field's problem; an empty field only when required.
  // The text's key is the WebAssembly's (the field package's MessageKey).
  function cardCheck(el, required) {
    var state = cardState(el);
    setComplete(el, state === "");
    if (state === C.states.REQUIRED && !required) { showError(el, ""); return false; }
    var key = C.messageKey(el.id.slice(3), state); // kw-number → number
    var text = !key ? "" : typeof M[key] === "string" ? M[key] : typeof M[C.genericMessageKey] === "string" ? M[C.genericMessageKey] : "";
    showError(el, text);
    return state === "";
  }

  // setBrand shows b's mark and sizes the security-code field.
  function setBrand(b) {
    if (b === brand) { return; }
    brand = b;
    wrapOf(F.number).setAttribute("data-brand", b);
    if (brandImg) {
      var src = brandImg.getAttribute("data-src-" + b);
      if (src !== null) { brandImg.src = src; }
      var label = brandImg.getAttribute("data-label-" + b);
      brandImg.alt = label === null ? "" : label;
    }
    F.cvc.maxLength = C.cvvMax(b);
    F.cvc.placeholder = b === C.amex ? "1234" : "123";
  }
  // checkCVCQuietly re-judges the security code after the brand changed.
  function checkCVCQuietly() {
    var state = C.cvvState(F.cvc.value, brand);
    setComplete(F.cvc, state === "");
    if (isInvalid(F.cvc) || state === C.states.INVALID_CVV) { cardCheck(F.cvc, false); }
  }

  function numberInput(e) {
    var el = F.number, v = el.value, pos = caretOf(el, v), atEnd = pos >= v.length;
    var idx = C.digitIndex(v, pos), n = C.clamp(v);
    // Backspace (or Delete) on a group space removed no digit: remove the
    // digit beside it instead, as the customer meant.
    if (n.length === numberDigits && n.length > 0) {
      if (e.inputType === "deleteContentBackward" && idx > 0) {
        n = n.slice(0, idx - 1) + n.slice(idx); idx--; atEnd = false;
      } else if (e.inputType === "deleteContentForward" && idx < n.length) {
        n = n.slice(0, idx) + n.slice(idx + 1); atEnd = false;
      }
    }
    numberDigits = n.length;
    var out = C.format(n);
    if (out !== v) {
      el.value = out;
      place(el, atEnd ? out.length : C.formatCaret(n, idx));
    }
    var b = C.detectBrand(n);
    setBrand(b);
    var state = C.numberState(n);
    setComplete(el, state === "");
    if (n.length >= C.maxLength(b) || C.autoAdvance(b, n.length) || isInvalid(el)) { cardCheck(el, false); }
    if (state === "" && typing(e) && atEnd && C.autoAdvance(b, n.length)) { F.exp.focus(); }
    if (F.cvc.value !== "" && (isInvalid(F.cvc) || wrapOf(F.cvc).classList.contains("is-complete"))) { checkCVCQuietly(); }
  }
  function expInput(e) {
    var el = F.exp, v = el.value, pos = caretOf(el, v), atEnd = pos >= v.length;
    var idx = C.digitIndex(v, pos);
    var out = C.formatExpiry(v, deleting(e));
    if (out !== v) {
      el.value = out;
      place(el, atEnd ? out.length : C.caretAfterDigits(out, idx));
    }
    var state = C.expiryState(out, new Date());
    setComplete(el, state === "");
    var full = C.digits(out).length === 4;
    if (full || isInvalid(el)) { cardCheck(el, false); }
    if (full && state === "" && typing(e) && atEnd) { F.cvc.focus(); }
  }
  function cvcInput(e) {
    var el = F.cvc, v = el.value, n = C.digits(v), m = C.cvvMax(brand);
    if (n.length > m) { n = n.slice(0, m); }
    if (n !== v) { el.value = n; }
    var state = C.cvvState(n, brand);
    setComplete(el, state === "");
    var full = C.known(brand) && n.length === C.cvvLength(brand);
    if (full || isInvalid(el)) { cardCheck(el, false); }
    if (full && state === "" && typing(e) && F.name.value === "") { F.name.focus(); }
  }

  function bindFields() {
    F.number.addEventListener("input", numberInput);
    F.exp.addEventListener("input", expInput);
    F.cvc.addEventListener("input", cvcInput);
    F.name.addEventListener("input", function () { if (isInvalid(F.name)) { cardCheck(F.name, false); } });
    [F.number, F.exp, F.cvc, F.name].forEach(function (el) {
      el.addEventListener("blur", function () { cardCheck(el, false); });
    });
  }
  // useRules makes R the fields' rules (binding the fields the first time)
  // and formats what was typed before as from now on. judge also judges
  // again the fields already in error, by R.
  var bound = false;
  function useRules(R, judge) {
    C = R;
    if (judge && F.phone && isInvalid(F.phone)) { slipCheck(F.phone, false); }
    if (!F.number) { return; } // no card form: konbini or bank transfer alone
    if (!bound) { bound = true; bindFields(); }
    if (F.number.value) { F.number.value = C.format(C.clamp(F.number.value)); }
    numberDigits = C.digits(F.number.value).length;
    if (F.exp.value) { F.exp.value = C.formatExpiry(F.exp.value, true); }
    setBrand(C.detectBrand(F.number.value));
    if (judge) {
      [F.number, F.exp, F.cvc, F.name].forEach(function (el) { if (isInvalid(el)) { cardCheck(el, false); } });
    }
  }

  // Only the e-mail is checked here whatever runs: the card rules only know cards.
  function fallbackState(el, required) {
    var v = el.value;
    if (el === F.email) {
      v = v.trim();
      if (!v) { return required ? "email.required" : ""; }
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) && v.length <= 254 ? "" : "email.invalid";
    }
    return "";
  }
  function fallbackCheck(el, required) {
    var key = fallbackState(el, required);
    showError(el, key ? (M[key] || M["field.generic"]) : "");
    return !key;
  }
  // The e-mail is always checked here: the WebAssembly only knows cards.
  if (F.email) {
    F.email.addEventListener("blur", function () { fallbackCheck(F.email, false); });
    F.email.addEventListener("input", function () { if (isInvalid(F.email)) { fallbackCheck(F.email, false); } });
  }

  // checkAll validates every field (showing the messages) and returns the
  // values to send, or null with the first bad field focused.
  function checkAll() {
    var ok = true, first = null, expMonth, expYear;
    if (!C) { showAlert(M.network); return null; } // neither the WebAssembly nor the card rules arrived
    [F.number, F.exp, F.cvc, F.name].forEach(function (el) {
      if (!cardCheck(el, true)) { if (ok) { first = el; } ok = false; }
    });
    var exp = C.parseExpiry(F.exp.value);
    if (exp) { expMonth = exp.month; expYear = C.normalizeYear(exp.year); }
    if (F.email && !fallbackCheck(F.email, true)) {
      if (ok || (first && first.compareDocumentPosition(F.email) & Node.DOCUMENT_POSITION_PRECEDING)) { first = F.email; }
      ok = false;
    }
    if (!ok) {
      if (first) { first.focus(); }
      return null;
    }
    return {
      number: digits(F.number.value), expMonth: expMonth, expYear: expYear,
      cvc: digits(F.cvc.value), name: F.name.value.trim(),
      email: F.email ? F.email.value.trim() : cfg.email
    };
  }

  // ---- alerts and states ---------------------------------------------
  function showAlert(msg, info) {
    if (!msg) { alertBox.hidden = true; alertBox.textContent = ""; return; }
    alertBox.classList.toggle("is-info", !!info);
    alertBox.textContent = msg;
    alertBox.hidden = false;
  }
  var busy = false;
  function setBusy(on) {
    busy = on;
    form.classList.toggle("is-busy", on);
    payBtn.classList.toggle("is-busy", on);
    payBtn.disabled = on;
    for (var i = 0; i < walletBtns.length; i++) { walletBtns[i].disabled = on; }
    payBtn.setAttribute("aria-busy", on ? "true" : "false");
    payLabel.textContent = on ? (M.working || payText) : payText;
    [F.email, F.number, F.exp, F.cvc, F.name, F.cname, F.phone].forEach(function (el) { if (el) { el.readOnly = on; } });
    // A select and radios cannot be read-only: they are disabled while
    // the payment is under way, and given back after.
    [F.store].concat(Array.prototype.slice.call(switchInputs), bankInputs()).forEach(function (el) {
      if (el) { el.disabled = on; }
    });
  }
  function bankInputs() { return F.bank ? Array.prototype.slice.call(F.bank.querySelectorAll("input")) : []; }
  function showDone(status, via) {
    var title = cfg.checkout === "token" ? (SLIPS[via] ? M.slipSaved : M.saved) : cfg.subscription ? M.subscribed :
      status === "authorized" ? M.authorized : M.paid;
    d.getElementById("kw-done-title").textContent = title;
    d.getElementById("kw-done-hint").textContent = M.doneHint || "";
    showAlert("");
    endStep();
    form.hidden = true;
    if (methods) { methods.hidden = true; }
    done.hidden = false;
    var test = d.querySelector(".kw-test");
    if (test) { test.hidden = true; }
    if (!cfg.inline) { done.focus(); }
  }

  // ---- API -----------------------------------------------------------
  function uuid() {
    if (window.crypto && crypto.randomUUID) { return crypto.randomUUID(); }
    var b = new Uint8Array(16); crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
  }
  function api(method, path, body, idem) {
    var headers = { Authorization: "Bearer " + cfg.appId, Accept: "application/json" };
    if (body) { headers["Content-Type"] = "application/json"; }
    if (idem) { headers["Idempotency-Key"] = idem; }
    return fetch(path, {
      method: method, headers: headers, body: body ? JSON.stringify(body) : undefined,
      credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer"
    }).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!res.ok) { throw { http: res.status, body: data || {} }; }
        return data;
      });
    }, function () { throw { network: true }; });
  }
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  var FIELD_OF = {
    card_number: "number", exp_month: "exp", exp_year: "exp", cvv: "cvc", cardholder: "name", email: "email",
    "data.card_number": "number", "data.exp_month": "exp", "data.exp_year": "exp", "data.cvv": "cvc", "data.cardholder": "name",
    convenience_store: "store", customer_name: "cname", phone_number: "phone", "phone_number.local_number": "phone",
    "phone_number.country_code": "phone", brand: "bank", "data.convenience_store": "store", "data.customer_name": "cname",
    "data.phone_number": "phone", "data.phone_number.local_number": "phone", "data.phone_number.country_code": "phone",
    "data.brand": "bank"
  };
  var REASON_KEY = {
    REQUIRED_VALUE: "required", INVALID_CARD_NUMBER: "invalid", INVALID_CARD_EXPIRATION: "invalid",
    INVALID_CVV: "invalid", INVALID_FORMAT: "invalid", INVALID_FORMAT_EMAIL: "invalid", INVALID_FORMAT_LENGTH: "invalid",
    INVALID_PHONE_NUMBER: "invalid", ONLY_JAPANESE_PHONE_NUMBER_ALLOWED: "foreign"
  };
  // paymentMessage is the shopper's text for a charge's error.
  function paymentMessage(err, status) {
    var c = err && err.code;
    switch (c) {
      case 304: return M.expiredCard;
      case 305: return M.incorrectCvc;
      case 311: return M.tooQuick;
      case 315: return M.contactBank;
      case 356: case 358: return M.threeDS;
      case 327: return M.walletExpired;
      case 340: return M.walletRefused;
      case 345: return M.walletCanceled;
      case 309: case 320: case 343: case 344: case 500: return M.processing;
    }
    return status === "canceled" ? M.walletCanceled : M.declined;
  }
  // API_ERRORS maps the codes the API answers with (server/payment/error.go;
  // web/checkout/errorcodes_test.go holds this table to them) to [message, fatal].
  // Fatal ones are the shop's setup, which no retry mends: the loader gives
  // up. A code missing here shows the generic message (the processing one
  // for a 5xx).
  var API_ERRORS = {
    VALIDATION_ERROR: ["config", false], // fields the shopper cannot see: the shop's parameters
    INVALID_APP_TOKEN: ["config", true],
    INVALID_DOMAIN: ["config", true],
    AUTH_HEADER_MISSING: ["config", true],
    INVALID_PERMISSIONS: ["config", true],
    DIRECT_CARD_TOKEN_CREATION_DISABLED: ["config", true],
    TOKEN_FOR_WRONG_STORE: ["config", true],
    PROCESSING_MODE_MISMATCH: ["config", true],
    CHARGE_AMOUNT_TOO_LOW: ["amount", true],
    CHARGE_AMOUNT_TOO_HIGH: ["amount", true],
    NO_TEST_CARD_IN_LIVE_MODE: ["testCardLive", false],
    TRANSACTION_TOKEN_EXPIRED: ["expired", false],
    TRANSACTION_ALREADY_PROCESSED: ["expired", false],
    TOO_MANY_REQUESTS: ["tooMany", false],
    RESOURCE_LIMIT_REACHED: ["unavailable", false],
    NO_GATEWAYS_AVAILABLE: ["unavailable", false],
    SERVICE_UNAVAILABLE_TRY_AGAIN: ["unavailable", false],
    INTERNAL_SERVER_ERROR: ["processing", false],
    IDEMPOTENCY_KEY_CONFLICT: ["processing", false],
    REQUEST_BODY_TOO_LARGE: ["generic", false],
    // A konbini payment or a bank transfer the store turned off since the
    // frame was served, or one in another currency than yen.
    CONVENIENCE_PROCESSING_DISABLED: ["slipUnavailable", false],
    PAYMENT_TYPE_NOT_ALLOWED: ["slipUnavailable", false],
    CURRENCY_NOT_SUPPORTED: ["slipUnavailable", false]
  };
  // SLIP_FIELDS are the fields of a konbini payment's or bank transfer's
  // form: an API error names them for a token of those methods only (a
  // card token's phone_number is the shop's, which the shopper never saw).
  var SLIP_FIELDS = { store: true, cname: true, phone: true, bank: true };
  // apiFailure shows what an API error means and returns {code, message,
  // fatal} for the loader. via is the payment type of the request that
  // failed.
  function apiFailure(e, via) {
    if (e && e.network) { showAlert(M.network); return { code: "NETWORK_ERROR", message: M.network, fatal: false }; }
    var b = (e && e.body) || {}, code = b.code || "UNKNOWN_ERROR", msg;
    var fields = b.errors || [];
    var shown = 0, first = null;
    fields.forEach(function (fe) {
      var name = FIELD_OF[fe.field], el = name && F[name];
      if (!el || name !== "email" && !!SLIP_FIELDS[name] !== !!SLIPS[via]) { return; }
      var key = name + "." + (REASON_KEY[fe.reason] || "invalid");
      showError(el, M[key] || M["field.generic"]);
      // The first in the form, whatever the order of the API's list.
      if (!first || first.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING) { first = el; }
      shown++;
    });
    if (shown) {
      focusField(first);
      msg = errOf(first).textContent;
      showAlert("");
      return { code: code, message: msg, fatal: false };
    }
    var known = Object.prototype.hasOwnProperty.call(API_ERRORS, code) ? API_ERRORS[code] : null;
    var fatal = !!(known && known[1]);
    msg = (known && M[known[0]]) || (e && e.http >= 500 ? M.processing : M.generic);
    showAlert(msg);
    return { code: code, message: msg, fatal: fatal };
  }

  var result = null; // the success, once there is one
  var attempt = null; // the payment under way: {live, brand, page}

  // pay runs one attempt with the card: token, then (payment) charge and
  // polling.
  function pay(requestId) {
    if (result) { post("success", withRequest(result, requestId)); return; }
    if (busy) {
      if (requestId) { post("error", { requestId: requestId, code: "BUSY", message: M.busy, fatal: false }); }
      return;
    }
    showAlert("");
    if (SLIPS[method]) { paySlip(method, requestId); return; }
    if (!method) {
      // Only wallets here: the shopper's choice of one is the payment.
      showAlert(M.chooseMethod);
      if (requestId) { post("error", { requestId: requestId, code: "VALIDATION_ERROR", message: M.chooseMethod, fatal: false }); }
      if (walletBtns[0]) { walletBtns[0].focus(); }
      return;
    }
    if (!C) {
      var failed = apiFailure({ network: true });
      if (requestId) { failed.requestId = requestId; }
      post("error", failed);
      return;
    }
    var v = checkAll();
    if (!v) {
      if (requestId) {
        var bad = d.querySelector(".kw-field.is-invalid .kw-err");
        post("error", { requestId: requestId, code: "VALIDATION_ERROR", message: bad ? bad.textContent : "", fatal: false });
      }
      return;
    }
    var tokenBody = {
      payment_type: "card", type: cfg.tokenType, email: v.email,
      data: { cardholder: v.name, card_number: v.number, exp_month: v.expMonth, exp_year: v.expYear, cvv: v.cvc }
    };
    // The shop's phoneNumber option, checked and split by the gateway.
    if (cfg.phoneNumber) { tokenBody.data.phone_number = cfg.phoneNumber; }
    v = null; // the card is in tokenBody only, until the request is sent
    run(tokenBody, { type: "card" }, requestId);
  }

  // payWallet pays with an online wallet: a one-time token for the brand
  // (call_method web: a page the browser opens), a charge, and the
  // shopper's approval on the wallet's page.
  function payWallet(brand) {
    if (result || busy || !WALLETS[brand]) { return; }
    showAlert("");
    var email = cfg.email || (F.email && F.email.value.trim() && !fallbackState(F.email, true) ? F.email.value.trim() : "");
    var tokenBody = { payment_type: "online", type: "one_time", data: { brand: brand, call_method: "web" } };
    if (email) { tokenBody.email = email; }
    run(tokenBody, { type: "online", brand: brand }, null);
  }

  // ---- konbini payments and bank transfers ---------------------------

  // setMethod shows the form of m (card, konbini or bank_transfer) with
  // its pay button's label and its test-mode hint. The e-mail, when the
  // frame asks for one, is required for a card only: a card token needs
  // it, first, a konbini payment's or a bank transfer's may go without
  // it, last.
  function setMethod(m) {
    if (m === method || !cfg.payLabels || !cfg.payLabels[m]) { return; }
    method = m;
    var panels = d.querySelectorAll(".kw-panel");
    for (var i = 0; i < panels.length; i++) { panels[i].hidden = panels[i].getAttribute("data-method") !== m; }
    payText = cfg.payLabels[m];
    if (!busy) { payLabel.textContent = payText; }
    if (testHint && cfg.testHints && cfg.testHints[m]) { testHint.textContent = cfg.testHints[m]; }
    if (F.email) {
      var required = m === "card", wrap = wrapOf(F.email), cardPanel = d.getElementById("kw-panel-card");
      form.insertBefore(wrap, required && cardPanel ? cardPanel : payBtn);
      F.email.required = required;
      if (required) { F.email.setAttribute("aria-required", "true"); } else { F.email.removeAttribute("aria-required"); }
      d.getElementById("kw-email-label").textContent = required ? cfg.labels.email : cfg.labels.emailOptional;
      if (!required && !F.email.value.trim()) { showError(F.email, ""); }
    }
    showAlert("");
  }
  Array.prototype.forEach.call(switchInputs, function (r) {
    r.addEventListener("change", function () { if (r.checked) { setMethod(r.value); } });
  });

  // slipKey is the message key of a konbini or bank-transfer field's
  // problem, "" for none: judged as the API judges it, the phone number by
  // the field package's rule (the WebAssembly's, or its port's).
  function slipKey(el) {
    var v;
    if (el === F.store) { return el.value ? "" : "store.required"; }
    if (el === F.cname) {
      v = el.value.trim();
      if (!v) { return "cname.required"; }
      // At most 60 characters (code points), none of them a control.
      return v.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, "_").length > 60 || /[\u0000-\u001f\u007f-\u009f]/.test(v) ? "cname.invalid" : "";
    }
    if (el === F.phone) { return C ? C.messageKey("phone", C.japanesePhone(el.value).state) : ""; }
    if (el === F.bank) { return el.querySelector("input:checked") ? "" : "bank.required"; }
    return "";
  }
  // slipCheck shows the field's problem; an empty field only when
  // required.
  function slipCheck(el, required) {
    var key = slipKey(el);
    if (!required && /\.required$/.test(key)) { key = ""; }
    showError(el, key ? (M[key] || M["field.generic"]) : "");
    return !key;
  }
  [F.store, F.cname, F.phone].forEach(function (el) {
    if (!el) { return; }
    el.addEventListener("blur", function () { slipCheck(el, false); });
    el.addEventListener(el === F.store ? "change" : "input", function () { if (isInvalid(el)) { slipCheck(el, false); } });
  });
  if (F.bank) { F.bank.addEventListener("change", function () { if (isInvalid(F.bank)) { slipCheck(F.bank, false); } }); }

  // focusField focuses a field, or a group of choices' chosen one (its
  // first when none is).
  function focusField(el) {
    if (el && el.matches("fieldset")) { el = el.querySelector("input:checked") || el.querySelector("input"); }
    if (el) { el.focus(); }
  }
  function firstField(m) { return m === "konbini" ? F.store : F.bank; }

  // paySlip pays by konbini or by bank transfer: a one-time token of the
  // method with what the shopper gave, its charge, and, once the charge
  // awaits the shopper, its instructions (poll, instructions).
  function paySlip(m, requestId) {
    if (!C) {
      var failed = apiFailure({ network: true });
      if (requestId) { failed.requestId = requestId; }
      post("error", failed);
      return;
    }
    // Every field judged; the first in the form in error takes the focus
    // (the e-mail, optional here, comes last).
    var first = null;
    (m === "konbini" ? [F.store, F.cname, F.phone] : [F.bank]).forEach(function (el) {
      if (!slipCheck(el, true) && !first) { first = el; }
    });
    if (F.email && !fallbackCheck(F.email, false) && !first) { first = F.email; }
    if (first) {
      focusField(first);
      if (requestId) {
        post("error", { requestId: requestId, code: "VALIDATION_ERROR", message: errOf(first).textContent, fatal: false });
      }
      return;
    }
    var data = m === "konbini" ? {
      convenience_store: F.store.value, customer_name: F.cname.value.trim(),
      // Japan's calling code: the field package's rule took no other.
      phone_number: { country_code: 81, local_number: C.japanesePhone(F.phone.value).local }
    } : { brand: F.bank.querySelector("input:checked").value };
    var tokenBody = { payment_type: m, type: "one_time", data: data };
    var email = cfg.email || (F.email ? F.email.value.trim() : "");
    if (email) { tokenBody.email = email; }
    run(tokenBody, { type: m }, requestId);
  }

  // instructions reads what an awaiting konbini payment or bank transfer
  // is paid with, its issuer token (the instructions page, and in its
  // payload the store's numbers or the account, the amount and the
  // deadline), and shows it. The charge awaits: a read that fails is tried
  // again a few times.
  function instructions(path, c, at) {
    var tries = 0;
    function read() {
      return api("GET", path + "/issuer_token").then(function (it) {
        if (!at.live) { throw { abandoned: true }; }
        showSlip(it, at.via);
      }, function (e) {
        if (!at.live) { throw { abandoned: true }; }
        if (++tries > 5 || !(e && (e.network || e.http >= 500 || e.http === 429 || e.http === 400))) { throw e; }
        return sleep(1000).then(read);
      });
    }
    return read();
  }

  function two(n) { return (n < 10 ? "0" : "") + n; }

  // deadlineText writes a deadline (RFC 3339) as a date and time in Japan,
  // which keeps no summer time (web/checkout's formatDeadline, the link
  // form's, writes it the same way from the same texts).
  function deadlineText(iso) {
    var t = Date.parse(iso || "");
    if (isNaN(t)) { return iso || ""; }
    var j = new Date(t + 9 * 3600000);
    var wd = String(S.weekdays || "").split(" "), mo = String(S.months || "").split(" ");
    return String(S.deadline_format || "{year}-{month}-{day} {time}")
      .replace("{weekday}", wd[j.getUTCDay()] || "").replace("{day}", String(j.getUTCDate()))
      .replace("{month}", mo[j.getUTCMonth()] || String(j.getUTCMonth() + 1)).replace("{year}", String(j.getUTCFullYear()))
      .replace("{time}", two(j.getUTCHours()) + ":" + two(j.getUTCMinutes()));
  }
  // slipAmount writes an amount in yen as the gateway's pages do (¥1,000).
  function slipAmount(amount, currency) {
    var n = String(parseInt(amount, 10) || 0).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return /^jpy$/i.test(currency || "") ? "\u00a5" + n : n + " " + (currency || "");
  }

  var copiedNote = d.getElementById("kw-copied");
  // copy puts text on the clipboard and says so on the button and to
  // assistive technology; where the Clipboard API is refused (an old
  // browser, a page that did not delegate it to the frame) the selection
  // is copied instead.
  function copy(text, btn) {
    function done() {
      btn.textContent = S.copied;
      copiedNote.textContent = S.copied;
      setTimeout(function () { btn.textContent = S.copy; copiedNote.textContent = ""; }, 2000);
    }
    function bySelection() {
      var t = d.createElement("textarea");
      t.value = text;
      t.setAttribute("readonly", "");
      t.className = "kw-visually-hidden";
      d.body.appendChild(t);
      t.select();
      var ok = false;
      try { ok = d.execCommand("copy"); } catch (e) { ok = false; }
      d.body.removeChild(t);
      btn.focus();
      if (ok) { done(); }
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, bySelection);
    } else {
      bySelection();
    }
  }

  // showSlip shows an awaiting konbini payment's or bank transfer's
  // instructions (its issuer token) in the form's place.
  function showSlip(it, via) {
    var p = (it && it.payload) || {}, list = d.getElementById("kw-slip-list"), title, text;
    var amount = slipAmount(p.amount, p.currency);
    function row(label, value, copyValue, sub, big) {
      var div = d.createElement("div"), dt = d.createElement("dt"), dd = d.createElement("dd"), v = d.createElement("span");
      div.className = "kw-slip-row";
      dt.textContent = label;
      v.className = "kw-slip-value" + (big ? " kw-slip-value--number" : "");
      v.textContent = value || "";
      dd.appendChild(v);
      if (sub) {
        var small = d.createElement("span");
        small.className = "kw-slip-sub";
        small.textContent = sub;
        dd.appendChild(small);
      }
      if (copyValue) {
        var b = d.createElement("button");
        b.type = "button";
        b.className = "kw-copy";
        b.textContent = S.copy;
        b.setAttribute("aria-label", fill(S.copy_what, cfg.locale === "en" ? label.toLowerCase() : label));
        b.addEventListener("click", function () { copy(copyValue, b); });
        dd.appendChild(b);
      }
      div.appendChild(dt);
      div.appendChild(dd);
      list.appendChild(div);
    }
    while (list.firstChild) { list.removeChild(list.firstChild); }
    if (via === "konbini") {
      var store = S["store_" + p.convenience_store] || p.convenience_store, easy = p.convenience_store === "pay_easy";
      title = easy ? S.pay_easy_title : fill(S.konbini_title, store);
      text = easy ? S.pay_easy_text : S.konbini_text;
      row(S.store, store);
      row(easy ? S.customer_number : S.payment_number, p.payment_number, p.payment_number, "", true);
      if (p.confirmation_number) { row(S.confirmation, p.confirmation_number, p.confirmation_number, "", true); }
      row(S.amount, amount);
    } else {
      title = fill(S.bank_title, amount);
      text = S.bank_text;
      row(S.bank, p.bank_name, "", p.bank_code ? fill(S.code, p.bank_code) : "");
      row(S.branch, p.branch_name, "", p.branch_code ? fill(S.code, p.branch_code) : "");
      row(S.account_type, p.account_type === "ordinary" ? S.ordinary : p.account_type);
      row(S.account_number, p.account_number, p.account_number, "", true);
      row(S.holder, p.account_holder_name, p.account_holder_name);
      row(S.amount, amount, String(parseInt(p.amount, 10) || ""));
    }
    row(S.deadline, deadlineText(p.expiration_date));
    d.getElementById("kw-slip-title").textContent = title;
    d.getElementById("kw-slip-text").textContent = text;
    var open = d.getElementById("kw-slip-open"), url = it && it.issuer_token;
    open.hidden = !/^https?:\/\//i.test(url || "");
    if (!open.hidden) { open.href = url; }
    showStep(slipBox);
  }
  var slipDone = d.getElementById("kw-slip-done");
  if (slipDone) {
    slipDone.hidden = !embedded || !!cfg.inline; // nothing to close when the frame is the page
    slipDone.addEventListener("click", function () { post("close"); });
  }

  // run makes the token and, for a payment, the charge, and follows it to
  // its end. via is how: {type: card, online (with the wallet's brand),
  // konbini or bank_transfer}.
  function run(tokenBody, via, requestId) {
    setBusy(true);
    if (cfg.metadata) { tokenBody.metadata = cfg.metadata; }
    var token = null, brand = via.brand || null;
    var at = attempt = { live: true, brand: brand, via: via.type, page: "" };
    api("POST", "/tokens", tokenBody, uuid()).then(function (tok) {
      tokenBody = null;
      token = tok;
      post("token-created", { tokenId: tok.id });
      if (cfg.checkout === "token") {
        return { response: tok, tokenId: tok.id, chargeId: null, status: "created" };
      }
      var threeDS = null;
      if (via.type === "card") {
        threeDS = { mode: cfg.threeDS || "normal" };
        if (wholeTab()) { threeDS.redirect_endpoint = cfg.returnUrl; }
      }
      if (cfg.subscription) { return subscribe(tok, threeDS, at); }
      var chargeBody = {
        transaction_token_id: tok.id, amount: cfg.amount, currency: cfg.currency, capture: cfg.capture !== false
      };
      if (cfg.metadata) { chargeBody.metadata = cfg.metadata; }
      if (threeDS) { chargeBody.three_ds = threeDS; }
      return api("POST", "/charges", chargeBody, uuid()).then(function (ch) { return poll(ch, at); });
    }).then(function (r) {
      if (at !== attempt) { return; }
      attempt = null;
      result = r;
      setBusy(false);
      // An awaiting payment's instructions stay on screen: the shopper
      // pays with them later.
      if (r.status !== "awaiting") { showDone(r.status, via.type); }
      post("success", withRequest(r, requestId));
    }, function (e) {
      tokenBody = null;
      if (at !== attempt) { return; } // given up by the shopper (the back button)
      attempt = null;
      endStep();
      setBusy(false);
      var info;
      if (e && e.charge) {
        var slip = SLIPS[via.type];
        var msg = e.timeout ? M.timeout : slip ? M.slipFailed : paymentMessage(e.charge.error, e.charge.status);
        showAlert(msg);
        info = { code: (e.charge.error && e.charge.error.code) || e.charge.status, message: msg, fatal: false, chargeId: e.charge.id };
        var again = brand ? d.querySelector(".kw-wallet[data-brand='" + brand + "']") : slip ? firstField(via.type) : F.number;
        if (again) { focusField(again); }
        if (via.type === "card") { try { F.number.select(); } catch (x) { /* ignore */ } }
      } else {
        info = apiFailure(e, via.type);
      }
      if (token) { info.tokenId = token.id; }
      if (requestId) { info.requestId = requestId; }
      post("error", info);
    });
  }

  function withRequest(r, requestId) {
    var out = { response: r.response, tokenId: r.tokenId, chargeId: r.chargeId, status: r.status };
    if (r.subscriptionId) { out.subscriptionId = r.subscriptionId; }
    if (requestId) { out.requestId = requestId; }
    return out;
  }

  // subscribe makes the subscription of a subscription checkout on its
  // token (the terms are the frame's, checked by the gateway when it served
  // it) and follows it to its start: while it is unverified its first
  // charge is under way, which poll follows as a payment's (a 3-D Secure
  // challenge included, a decline rejecting as a payment's does); then the
  // subscription is read until it has left unverified. The shop gets the
  // subscription as the response.
  function subscribe(tok, threeDS, at) {
    var s = cfg.subscription, k;
    var body = { transaction_token_id: tok.id, amount: cfg.amount, currency: cfg.currency };
    for (k in s) { if (Object.prototype.hasOwnProperty.call(s, k)) { body[k] = s[k]; } }
    if (threeDS) { body.three_ds = threeDS; }
    if (cfg.metadata) { body.metadata = cfg.metadata; }
    return api("POST", "/subscriptions", body, uuid()).then(function (sub) {
      var path = "/stores/" + encodeURIComponent(sub.store_id || cfg.storeId) + "/subscriptions/" + encodeURIComponent(sub.id);
      function done(x, chargeId) {
        return { response: x, tokenId: tok.id, chargeId: chargeId || null, subscriptionId: x.id, status: x.status };
      }
      if (sub.status !== "unverified" && sub.status !== "unpaid") {
        // Nothing charged now (a later start, a free first period).
        return done(sub, null);
      }
      return firstCharge(path, at).then(function (ch) { return poll(ch, at); }).then(function (r) {
        return started(path, sub, at).then(function (x) { return done(x, r.chargeId); });
      });
    });
  }

  // firstCharge is a new subscription's first charge (made with it, so
  // there at once; a few reads allow for a slow store).
  function firstCharge(path, at) {
    var tries = 0;
    function read() {
      if (!at.live) { throw { abandoned: true }; }
      return api("GET", path + "/charges").then(function (page) {
        var items = (page && page.items) || [];
        if (items.length) { return items[items.length - 1]; }
        if (++tries > 20) { throw { http: 0 }; }
        return sleep(250).then(read);
      });
    }
    return read();
  }

  // started reads the subscription until it has left unverified, which it
  // does in the same step as its first charge ends.
  function started(path, sub, at) {
    var tries = 0;
    function read(x) {
      if (!at.live) { throw { abandoned: true }; }
      if (x.status !== "unverified" || ++tries > 10) { return x; }
      return api("GET", path + "?polling=true").then(read);
    }
    return read(sub);
  }

  // wholeTab reports whether a 3-D Secure challenge takes the whole tab:
  // only on the gateway's own link form (cfg.returnUrl), whose page this
  // frame may navigate.
  function wholeTab() {
    try { return !!cfg.returnUrl && window.top !== window && window.top.location.origin === location.origin; } catch (e) { return false; }
  }

  // poll follows a charge until it ends, each read waiting for a change
  // (?polling=true: the gateway answers when the charge reaches another
  // stage, e.g. awaiting). Once it awaits the shopper (a challenge, a
  // wallet) the step is shown. Declines reject with {charge}. The time
  // limit (10 minutes, as the SDKs have) starts again with the shopper's
  // step, which the gateway itself ends when it expires.
  function poll(ch, at) {
    var started = Date.now(), wait = 250, errors = 0, shown = false;
    var path = "/stores/" + encodeURIComponent(ch.store_id || cfg.storeId) + "/charges/" + encodeURIComponent(ch.id);
    function live() { if (!at.live) { throw { abandoned: true }; } }
    function step(c) {
      live();
      switch (c.status) {
        case "successful": case "authorized":
          showAlert("");
          return { response: c, tokenId: c.transaction_token_id, chargeId: c.id, status: c.status };
        case "failed": case "error": case "canceled":
          throw { charge: c };
      }
      // A konbini payment or a bank transfer awaits its shopper until
      // its deadline: once its instructions are shown, the payment is
      // made as far as this page goes.
      if (c.status === "awaiting" && SLIPS[at.via]) {
        return instructions(path, c, at).then(function () {
          return { response: c, tokenId: c.transaction_token_id, chargeId: c.id, status: c.status };
        });
      }
      var next = Promise.resolve();
      if (c.status === "awaiting" && !shown) {
        shown = true;
        started = Date.now();
        next = approve(path, c, at).catch(function () { shown = false; showAlert(M.awaiting, true); });
      }
      if (Date.now() - started > 600000) { throw { charge: c, timeout: true }; }
      return next.then(function () { return sleep(wait); }).then(function () {
        live();
        wait = Math.min(wait * 1.5, 1500);
        return api("GET", path + "?polling=true");
      }).then(function (n) { errors = 0; return step(n); }, function (e) {
        if (e && (e.network || e.http >= 500 || e.http === 429) && ++errors <= 5) { return sleep(1000).then(function () { return step(c); }); }
        throw e;
      });
    }
    return step(ch);
  }

  // approve shows what the shopper must do for an awaiting charge: a
  // challenge (the charge's three_ds is awaiting) or a wallet payment.
  function approve(path, c, at) {
    if (c.three_ds && c.three_ds.status === "awaiting") {
      return api("GET", path + "/three_ds/issuer_token").then(function (it) { if (at.live) { return challenge(it); } });
    }
    return api("GET", path + "/issuer_token").then(function (it) { if (at.live) { showWallet(it, at); } });
  }

  // challenge posts the issuer token's payload to the issuer's page, in
  // the inner frame or, on the link form, in the whole tab.
  function challenge(it) {
    var url = it && it.issuer_token;
    if (!/^https?:\/\//i.test(url || "")) { throw { http: 0 }; }
    var f = d.getElementById("kw-acs-form"), p = it.payload || {}, whole = wholeTab();
    while (f.firstChild) { f.removeChild(f.firstChild); }
    for (var k in p) {
      if (Object.prototype.hasOwnProperty.call(p, k)) {
        var i = d.createElement("input");
        i.type = "hidden"; i.name = k; i.value = p[k];
        f.appendChild(i);
      }
    }
    f.action = url;
    f.target = whole ? "_top" : "kw-acs";
    if (!whole) { showStep(acsBox); }
    f.submit();
    if (whole) { return new Promise(function () { /* the tab goes to the challenge */ }); }
  }

  // The challenge page is on the gateway's origin: the inner frame takes
  // its height.
  function fitAcs() {
    try {
      var h = acs.contentDocument.documentElement.scrollHeight;
      if (h > 0 && h < 1e4 && acs.contentWindow.location.href !== "about:blank") { acs.style.height = h + "px"; }
    } catch (e) { /* another origin: the frame keeps its size */ }
  }
  if (acs) {
    acs.addEventListener("load", function () {
      fitAcs();
      try {
        if (typeof ResizeObserver === "function") { new ResizeObserver(fitAcs).observe(acs.contentDocument.documentElement); }
      } catch (e) { /* another origin */ }
    });
  }

  // showWallet shows the wallet's page as a QR code to scan with a phone
  // (the sandbox's pages draw their own: {page}/qr.png) and a link that
  // opens it on this device.
  function showWallet(it, at) {
    var url = it && it.issuer_token, name = WALLETS[at.brand] || at.brand;
    if (!/^https?:\/\//i.test(url || "")) { throw { http: 0 }; }
    var page = url.split(/[?#]/)[0];
    var ours = page.indexOf(location.origin + "/sandbox/wallet/") === 0;
    var qr = d.getElementById("kw-qr"), open = d.getElementById("kw-open");
    at.page = ours ? page : "";
    d.getElementById("kw-wallet-title").textContent = fill(M.walletTitle, name);
    d.getElementById("kw-wallet-text").textContent = fill(ours ? M.walletScan : M.walletHint, name);
    qr.hidden = !ours;
    if (ours) { qr.src = page + "/qr.png"; }
    open.href = url;
    open.textContent = fill(M.walletOpen, name);
    showStep(walletBox);
  }

  // showStep puts a step (the challenge, the wallet) in the form's place.
  function showStep(el) {
    showAlert("");
    form.hidden = true;
    if (methods) { methods.hidden = true; }
    el.hidden = false;
    if (!cfg.inline) { el.focus(); }
  }
  // endStep puts the form (and the wallets) back.
  function endStep() {
    if (walletBox) {
      walletBox.hidden = true;
      d.getElementById("kw-qr").removeAttribute("src");
    }
    if (acsBox) {
      acsBox.hidden = true;
      acs.style.height = "";
    }
    if (slipBox) { slipBox.hidden = true; }
    form.hidden = !method;
    if (methods) { methods.hidden = false; }
  }

  // The back button: this payment is given up. On the sandbox's
  // wallet page the frame cancels it too, as the shopper would there, so
  // that the page left open cannot still take the money.
  var backBtn = d.getElementById("kw-back");
  if (backBtn) {
    backBtn.addEventListener("click", function () {
      var at = attempt;
      if (!at) { return; }
      at.live = false;
      attempt = null;
      if (at.page) {
        fetch(at.page + "/act", {
          method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ action: "cancel" }),
          credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer"
        }).catch(function () { /* it expires by itself */ });
      }
      endStep();
      setBusy(false);
      showAlert("");
      var again = d.querySelector(".kw-wallet[data-brand='" + at.brand + "']");
      if (again) { again.focus(); }
    });
  }
  Array.prototype.forEach.call(walletBtns, function (b) {
    b.addEventListener("click", function () { payWallet(b.getAttribute("data-brand")); });
  });

  // ---- keyboard: keep focus inside the modal (Tab wraps) ---------------
  if (!cfg.inline) {
    d.addEventListener("keydown", function (e) {
      if (e.key !== "Tab") { return; }
      var items = Array.prototype.filter.call(
        d.querySelectorAll("button:not([disabled]):not([hidden]), input:not([disabled]), select:not([disabled]), a[href], iframe, [tabindex]:not([tabindex='-1'])"),
        function (el) { return el.offsetParent !== null || el === d.activeElement; });
      if (!items.length) { return; }
      var first = items[0], last = items[items.length - 1];
      if (e.shiftKey && d.activeElement === first) { e.preventDefault(); last.focus(); }
      else if (!e.shiftKey && d.activeElement === last) { e.preventDefault(); first.focus(); }
    });
  }

  function focusFirst() {
    if (!done.hidden) { done.focus(); return; }
    if (walletBox && !walletBox.hidden) { walletBox.focus(); return; }
    if (acsBox && !acsBox.hidden) { acsBox.focus(); return; }
    if (slipBox && !slipBox.hidden) { slipBox.focus(); return; }
    if (!method) { walletBtns[0].focus(); return; }
    var order = method === "card" ? [F.email, F.number, F.exp, F.cvc, F.name] :
      method === "konbini" ? [F.store, F.cname, F.phone] : [];
    for (var i = 0; i < order.length; i++) {
      if (order[i] && !order[i].value) { order[i].focus(); return; }
    }
    payBtn.focus();
  }

  window.addEventListener("message", function (e) {
    if (!embedded || e.origin !== cfg.origin || e.source !== parentWin) { return; }
    var m = e.data;
    if (!m || typeof m !== "object" || m.source !== SOURCE || m.v !== VERSION || m.instance !== (cfg.instance || "")) { return; }
    if (m.type === "submit") { pay(typeof m.requestId === "string" ? m.requestId : null); }
    else if (m.type === "focus") { focusFirst(); }
  });

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    if (!cfg.inline) { pay(null); } else { checkAll(); }
  });

  // ---- the WebAssembly -----------------------------------------------
  // data-wasm="failed" on <html> says that it will not run (not built, not
  // supported, or it did not load): the plain JavaScript keeps the fields.
  // data-wasm="ready" and window.kessaiWasm (its rules) say that the fields
  // follow it, and the "kessai:wasm-ready" event tells the same.
  function wasmFailed() { root.setAttribute("data-wasm", "failed"); }

  // wasmRules is the WebAssembly's card rules, as KessaiCard's functions.
  // Its exports take strings in the module's memory (wasm/widget/main.go):
  // the arguments, as UTF-8, one after the other in the exchange buffer,
  // passed as their lengths; a string result comes back at the start of
  // the buffer, its length returned. The buffer and the memory may move
  // with every call, so both are looked up again each time.
  function wasmRules(x) {
    var enc = new TextEncoder(), dec = new TextDecoder();
    function put(a, b) {
      var ea = enc.encode(a), eb = enc.encode(b || "");
      var p = x.buffer(ea.length + eb.length), m = new Uint8Array(x.mem.buffer);
      m.set(ea, p);
      m.set(eb, p + ea.length);
      return [ea.length, eb.length];
    }
    function str(n) { var p = x.buffer(0); return dec.decode(new Uint8Array(x.mem.buffer, p, n)); }
    function text(f) { return function (a) { return str(f(put(a)[0])); }; }
    function count(f) { return function (a, k) { return f(put(a)[0], k); }; }
    function texts(f) { return function (a, b) { var n = put(a, b); return str(f(n[0], n[1])); }; }
    var names = str(x.names()).split(" ");
    return {
      states: { REQUIRED: names[0], INVALID_CVV: names[1] },
      amex: names[2],
      unknown: names[3],
      genericMessageKey: names[4],
      digits: text(x.digits),
      clamp: text(x.clamp),
      format: text(x.format),
      detectBrand: text(x.detectBrand),
      numberState: text(x.numberState),
      cardholderState: text(x.cardholderState),
      formatCaret: count(x.formatCaret),
      digitIndex: count(x.digitIndex),
      caretAfterDigits: count(x.caretAfterDigits),
      maxLength: count(x.maxLength),
      cvvLength: count(x.cvvLength),
      cvvMax: count(x.cvvMax),
      known: function (b) { return !!x.known(put(b)[0]); },
      autoAdvance: function (b, n) { return !!x.autoAdvance(put(b)[0], n); },
      cvvState: texts(x.cvvState),
      messageKey: texts(x.messageKey),
      japanesePhone: function (v) { // "local state"
        var r = str(x.japanesePhone(put(v)[0])), i = r.indexOf(" ");
        return { local: r.slice(0, i), state: r.slice(i + 1) };
      },
      expiryState: function (v, now) {
        return str(x.expiryState(put(v)[0], now.getFullYear(), now.getMonth() + 1, now.getDate()));
      },
      formatExpiry: function (v, deleting) { return str(x.formatExpiry(put(v)[0], deleting ? 1 : 0)); },
      parseExpiry: function (v) { // year×100 + month, 0 when it does not parse
        var ym = x.parseExpiry(put(v)[0]);
        return ym ? { month: ym % 100, year: (ym - ym % 100) / 100 } : null;
      },
      normalizeYear: function (y) { return x.normalizeYear(y); }
    };
  }
  function loadWasm() {
    if (!cfg.wasm || !cfg.wasmExec || typeof WebAssembly !== "object") { wasmFailed(); return; }
    var s = d.createElement("script");
    s.src = cfg.wasmExec;
    s.onerror = wasmFailed;
    s.onload = function () {
      if (typeof window.Go !== "function") { wasmFailed(); return; }
      var go = new window.Go();
      var p = WebAssembly.instantiateStreaming
        ? WebAssembly.instantiateStreaming(fetch(cfg.wasm, { credentials: "same-origin" }), go.importObject)
        : fetch(cfg.wasm).then(function (r) { return r.arrayBuffer(); }).then(function (b) {
          return WebAssembly.instantiate(b, go.importObject);
        });
      p.then(function (r) {
        go.run(r.instance); // main waits at once; the exports answer from then on
        if (go.exited) { throw new Error("the WebAssembly exited"); }
        var R = wasmRules(r.instance.exports);
        useRules(R, true);
        window.kessaiWasm = R;
        root.setAttribute("data-wasm", "ready");
        d.dispatchEvent(new Event("kessai:wasm-ready"));
      }).catch(wasmFailed); // the plain JavaScript carries on
    };
    d.head.appendChild(s);
  }
  d.addEventListener("kessai:wasm-ready", function () {
    if (window.performance && performance.mark) { performance.mark("kessai:wasm-ready"); }
  });

  // An inline form's fields take the shop's data-inline-item-style, as the
  // gateway checked it, a property at a time (the CSP refuses style
  // attributes, not CSSOM).
  if (cfg.inline && cfg.itemStyle) {
    [].forEach.call(d.querySelectorAll(".kw-field"), function (el) {
      cfg.itemStyle.forEach(function (p) { el.style.setProperty(p[0], p[1]); });
    });
  }
  if (cfg.phoneNumberRefused) {
    console.warn("Kessai: phoneNumber is not a phone number a token takes (digits, spaces, - ( ) and a leading +); the token is made without it");
  }
  if (C) { useRules(C, false); }
  var chosen = d.querySelector(".kw-switch-input:checked");
  if (chosen) { setMethod(chosen.value); }
  payBtn.disabled = false;
  for (var wb = 0; wb < walletBtns.length; wb++) { walletBtns[wb].disabled = false; }
  watchHeight();
  if (window.performance && performance.mark) { performance.mark("kessai:frame-ready"); }
  post("ready", { checkout: cfg.checkout, inline: !!cfg.inline });
  if (!embedded && !cfg.inline) { focusFirst(); }
  // After the first paint: the form is already usable, the WebAssembly
  // (preloaded by the page) only improves it.
  (window.requestAnimationFrame || setTimeout)(function () { setTimeout(loadWasm, 0); });
})();
