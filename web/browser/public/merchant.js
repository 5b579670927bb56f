// The merchant test shop's own script, as a merchant would write it: it
// uses only the loader's public API (KessaiCheckout / UnivapayCheckout) and
// the window events, and records what it is told in window.merchantLog for
// the tests to read. It never sees card data, and must not need to.
(function () {
  "use strict";
  var cfgEl = document.getElementById("merchant-config");
  var cfg = cfgEl ? JSON.parse(cfgEl.textContent) : {};
  var logEl = document.getElementById("log");
  var log = (window.merchantLog = []);

  function record(kind, value) {
    var entry = { kind: kind, value: value === undefined ? null : JSON.parse(JSON.stringify(value, function (k, v) {
      return v instanceof Node ? "[" + v.nodeName + "]" : v;
    })) };
    log.push(entry);
    // Shown briefly (the tests read window.merchantLog): what happened, and ids.
    var v = entry.value, brief = "";
    if (v && typeof v === "object") { brief = v.chargeId || v.charge || v.tokenId || v.code || ""; }
    else if (typeof v === "string") { brief = v; }
    if (logEl) { logEl.textContent += kind + (brief ? " " + brief : "") + "\n"; }
  }

  ["opened", "closed", "success", "error", "token-created", "subscription-created", "ready"].forEach(function (name) {
    window.addEventListener("univapay:" + name, function (ev) { record("event:" + name, ev.detail); });
  });

  if (cfg.mode === "none" || cfg.mode === "html") { return; }

  var Checkout = window.KessaiCheckout;
  if (!Checkout || typeof Checkout.create !== "function") {
    record("no-loader", null);
    return;
  }
  record("loader", { same: window.UnivapayCheckout === window.KessaiCheckout });

  var options = {
    appId: cfg.appId,
    checkout: cfg.checkout,
    amount: cfg.amount,
    currency: cfg.currency,
    metadata: { order_id: "test-" + cfg.mode },
    onSuccess: function (r) { record("onSuccess", r); },
    onError: function (e) { record("onError", e); },
    onTokenCreated: function (t) { record("onTokenCreated", t); },
    opened: function () { record("opened", null); },
    closed: function () { record("closed", null); }
  };
  if (cfg.locale) { options.locale = cfg.locale; }
  if (cfg.email) { options.email = cfg.email; }
  if (cfg.phoneNumber) { options.phoneNumber = cfg.phoneNumber; }
  if (cfg.paymentTypes) { options.paymentTypes = cfg.paymentTypes; }
  if (cfg.tokenType) { options.tokenType = cfg.tokenType; }
  if (cfg.capture) { options.capture = cfg.capture; }
  if (cfg.subscriptionPeriod) { options.subscriptionPeriod = cfg.subscriptionPeriod; }

  var payBtn = document.getElementById("pay");
  if (cfg.mode === "modal") {
    var widget = Checkout.create(options);
    window.merchantWidget = widget;
    payBtn.addEventListener("click", function () { widget.open(); });
    return;
  }

  if (cfg.mode === "inline") {
    options.inline = true;
    if (cfg.inlineItemStyle) { options.inlineItemStyle = cfg.inlineItemStyle; }
    options.container = document.getElementById("card-element");
    var inline = Checkout.create(options);
    window.merchantWidget = inline;
    if (typeof inline.open === "function") { inline.open(); }
    payBtn.addEventListener("click", function () {
      var iframe = document.querySelector("#card-element iframe");
      // The reference API: KessaiCheckout.submit(iframe) -> Promise.
      var p = Checkout.submit(iframe);
      record("submit-called", null);
      p.then(function (r) { record("submit-resolved", r); }, function (e) { record("submit-rejected", e); });
    });
  }
})();
