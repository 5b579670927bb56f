// Kessai Coffee's checkout script. It uses the gateway's widget, loaded by
// the <script> tag before this one, in two ways (the third, HTML mode,
// needs no script of the shop's own):
//   - modal: a button opens the widget in a dialog, which offers PayPay,
//     a convenience store and a bank transfer beside the card (the page's
//     data-payment-types): the shopper pays PayPay on the wallet's page
//     and the widget reports the charge once it is paid; a konbini
//     payment or a bank transfer is reported while it awaits the
//     shopper's money, and the shop's server places the order awaiting
//     payment, with the instructions;
//   - inline: the widget's frame sits in the page and the shop's own
//     button submits it.
// Either way the widget hands back only the charge id; this script posts
// it to the shop's server (POST /orders), which checks it with the gateway
// before the order counts. The page never calls the gateway's API itself.
(function () {
  "use strict";
  var root = document.getElementById("checkout");
  if (!root) { return; }
  var d = root.dataset;
  var statusEl = document.getElementById("pay-status");
  var orderForm = document.getElementById("order-form");
  var modalBtn = document.getElementById("pay-modal");
  var inlineBtn = document.getElementById("pay-inline");
  var inlineBox = document.getElementById("inline-frame");
  var posted = false;

  function setStatus(text, isError) {
    statusEl.textContent = text || "";
    statusEl.classList.toggle("is-error", !!isError);
  }
  function setBusy(btn, on) {
    if (!btn) { return; }
    var label = btn.querySelector(".label");
    if (on) {
      btn.dataset.label = label.textContent;
      label.textContent = d.msgProcessing;
    } else if (btn.dataset.label) {
      label.textContent = btn.dataset.label;
    }
    btn.classList.toggle("is-busy", on);
    btn.setAttribute("aria-busy", on ? "true" : "false");
    btn.disabled = on;
  }

  // chargeIdOf reads the charge id out of what the widget reports.
  function chargeIdOf(r) {
    if (!r) { return ""; }
    if (typeof r.chargeId === "string" && r.chargeId) { return r.chargeId; }
    if (typeof r.charge === "string" && r.charge) { return r.charge; }
    if (r.charge && r.charge.id) { return r.charge.id; }
    if (r.response && r.response.id) { return r.response.id; }
    return "";
  }

  // place hands the charge id to the shop's server.
  function place(method, result) {
    var id = chargeIdOf(result);
    if (!id || posted) { return; }
    posted = true;
    setBusy(method === "modal" ? modalBtn : inlineBtn, true);
    setStatus(d.msgProcessing);
    orderForm.elements.chargeId.value = id;
    orderForm.elements.method.value = method;
    orderForm.submit();
  }

  function failed(btn) {
    return function (e) {
      if (posted) { return; }
      setBusy(btn, false);
      // Card problems are shown inside the widget, which lets the shopper
      // try again; only a widget that gave up is reported here.
      if (e && e.fatal) { setStatus((e.message) || d.msgError, true); }
    };
  }

  var Checkout = window.KessaiCheckout || window.UnivapayCheckout;
  if (!Checkout || typeof Checkout.create !== "function") {
    setStatus(d.msgUnavailable, true);
    return;
  }

  function options(extra) {
    var o = {
      appId: d.appId,
      checkout: "payment",
      amount: parseInt(d.amount, 10),
      currency: d.currency,
      metadata: { order_id: d.order },
      locale: d.locale
    };
    for (var k in extra) { if (Object.prototype.hasOwnProperty.call(extra, k)) { o[k] = extra[k]; } }
    return o;
  }

  // Modal: one widget, opened by the button.
  var modal = Checkout.create(options({
    paymentTypes: d.paymentTypes.split(","),
    onSuccess: function (r) { place("modal", r); },
    onError: function (e) { if (e && e.fatal) { failed(modalBtn)(e); } },
    closed: function () { if (!posted) { modalBtn.disabled = false; } }
  }));
  modalBtn.disabled = false;
  modalBtn.addEventListener("click", function () {
    setStatus("");
    modalBtn.disabled = true; // until the dialog closes
    modal.open();
  });

  // Inline: created the first time its tab is chosen, so that the frame
  // loads only when it is wanted.
  var inline = null;
  function mountInline() {
    if (inline) { return; }
    inline = Checkout.create(options({
      inline: true,
      container: inlineBox,
      onSuccess: function (r) { place("inline", r); },
      onError: failed(inlineBtn)
    }));
    try {
      inline.open(); // inline: mounts the frame in the container
    } catch (e) {
      inlineBox.setAttribute("aria-busy", "false");
      setStatus(d.msgUnavailable, true);
      return;
    }
    var frame = inlineBox.querySelector("iframe");
    if (!frame) { return; }
    // The loader holds a submit until the frame is ready, so the button
    // can work at once; the skeleton goes when the frame has loaded.
    inlineBtn.disabled = false;
    frame.addEventListener("load", function () { inlineBox.setAttribute("aria-busy", "false"); });
  }
  inlineBtn.addEventListener("click", function () {
    if (!inline) { return; }
    setStatus("");
    setBusy(inlineBtn, true);
    var p;
    try { p = inline.submit(); } catch (e) { failed(inlineBtn)(e); return; }
    if (p && typeof p.then === "function") {
      p.then(function (r) {
        if (chargeIdOf(r)) { place("inline", r); } else if (!posted) { setBusy(inlineBtn, false); }
      }, failed(inlineBtn));
    }
  });

  var inlineTab = document.getElementById("m-inline");
  if (inlineTab.checked) { mountInline(); }
  Array.prototype.forEach.call(document.querySelectorAll("input[name=pm]"), function (input) {
    input.addEventListener("change", function () {
      setStatus("");
      if (input.value === "inline" && input.checked) { mountInline(); }
    });
  });

})();

// The subscription page: the widget makes a subscription (tokenType
// "subscription", subscriptionPeriod) instead of a charge, its first
// payment taken at once (a 3-D Secure challenge, if the card asks for one,
// inside the dialog), and hands back the subscription's id, which this
// script posts to the shop's server; the server checks the subscription
// with the gateway before the order counts.
(function () {
  "use strict";
  var root = document.getElementById("subscribe");
  if (!root) { return; }
  var d = root.dataset;
  var statusEl = document.getElementById("pay-status");
  var orderForm = document.getElementById("order-form");
  var btn = document.getElementById("pay-subscription");
  var label = btn.querySelector(".label");
  var posted = false;

  function setStatus(text, isError) {
    statusEl.textContent = text || "";
    statusEl.classList.toggle("is-error", !!isError);
  }
  function setBusy(on) {
    if (on) {
      btn.dataset.label = label.textContent;
      label.textContent = d.msgProcessing;
    } else if (btn.dataset.label) {
      label.textContent = btn.dataset.label;
    }
    btn.classList.toggle("is-busy", on);
    btn.setAttribute("aria-busy", on ? "true" : "false");
    btn.disabled = on;
  }

  var Checkout = window.KessaiCheckout || window.UnivapayCheckout;
  if (!Checkout || typeof Checkout.create !== "function") {
    setStatus(d.msgUnavailable, true);
    return;
  }
  var widget = Checkout.create({
    appId: d.appId,
    checkout: "payment",
    tokenType: "subscription",
    subscriptionPeriod: d.period,
    amount: parseInt(d.amount, 10),
    currency: d.currency,
    metadata: { order_id: d.order },
    locale: d.locale,
    onSuccess: function (r) {
      var id = r && (r.subscriptionId || (r.response && r.response.id));
      if (!id || posted) { return; }
      posted = true;
      setBusy(true);
      setStatus(d.msgProcessing);
      orderForm.elements.subscriptionId.value = id;
      orderForm.submit();
    },
    onError: function (e) {
      // Card problems show inside the widget, which lets the shopper try
      // again; only a widget that gave up is reported here.
      if (e && e.fatal && !posted) { setStatus(e.message || d.msgError, true); }
    },
    closed: function () { if (!posted) { btn.disabled = false; } }
  });
  btn.disabled = false;
  btn.addEventListener("click", function () {
    setStatus("");
    btn.disabled = true; // until the dialog closes
    widget.open();
  });
})();
