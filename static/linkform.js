// Kessai hosted link form: mounts the card widget (inline) and, once it
// reports a payment, posts the id to the gateway, which checks it and sends
// the shopper back to the shop. Configuration comes from data-* attributes
// (the page's CSP allows no inline script).
(function () {
  "use strict";
  var root = document.getElementById("lf-checkout");
  var frameBox = document.getElementById("lf-frame");
  var payBtn = document.getElementById("lf-pay");
  var statusEl = document.getElementById("lf-status");
  var done = document.getElementById("lf-complete");
  if (!root || !payBtn || !done) { return; }
  var d = root.dataset;
  var label = payBtn.querySelector(".lf-btn-label");
  var payLabel = label.textContent;
  var finished = false;
  var busy = false;

  function setStatus(text, isError) {
    statusEl.textContent = text || "";
    statusEl.classList.toggle("is-error", !!isError);
  }
  function setBusy(on) {
    busy = on;
    payBtn.classList.toggle("is-busy", on);
    payBtn.setAttribute("aria-busy", on ? "true" : "false");
    payBtn.disabled = on;
    label.textContent = on ? d.msgProcessing : payLabel;
  }
  function ready() {
    frameBox.setAttribute("aria-busy", "false");
    if (!busy && !finished) { payBtn.disabled = false; }
  }

  // A subscription form (data-subscription: its terms as the widget's
  // options) reports the subscription the widget made.
  var sub = null;
  try { sub = d.subscription ? JSON.parse(d.subscription) : null; } catch (err) { sub = null; }

  // ids reads the charge, token and subscription ids out of whatever the
  // widget reports.
  function ids(r) {
    r = r || {};
    var resp = r.response || {};
    var chargeId = r.chargeId || r.charge || "";
    var tokenId = r.tokenId || r.token || "";
    var subId = r.subscriptionId || "";
    if (typeof chargeId === "object") { chargeId = chargeId.id || ""; }
    if (typeof tokenId === "object") { tokenId = tokenId.id || ""; }
    if (!chargeId && !sub && d.checkout === "payment" && resp.id && resp.transaction_token_id) { chargeId = resp.id; }
    if (!tokenId) { tokenId = resp.transaction_token_id || resp.transactionTokenId || (d.checkout === "token" ? resp.id : "") || ""; }
    return { chargeId: chargeId, tokenId: tokenId, subscriptionId: subId };
  }

  function complete(r) {
    if (finished) { return; }
    var got = ids(r);
    if (sub ? !got.subscriptionId : d.checkout === "payment" ? !got.chargeId : !got.tokenId) { return; }
    finished = true;
    setBusy(true);
    setStatus(d.msgProcessing);
    done.elements.chargeId.value = got.chargeId;
    done.elements.tokenId.value = got.tokenId;
    done.elements.subscriptionId.value = got.subscriptionId;
    done.submit();
  }

  function failed(e) {
    if (finished) { return; }
    setBusy(false);
    // The widget shows card errors inside its own form; only say
    // something here when it gave up for good.
    if (e && e.fatal) {
      frameBox.setAttribute("aria-busy", "false");
      payBtn.disabled = true;
      setStatus((e && e.message) || d.msgLoadFailed, true);
    } else {
      setStatus("");
    }
  }

  var Checkout = window.KessaiCheckout || window.UnivapayCheckout;
  if (!Checkout || typeof Checkout.create !== "function") {
    frameBox.setAttribute("aria-busy", "false");
    setStatus(d.msgLoadFailed, true);
    return;
  }

  var metadata = {};
  try { metadata = JSON.parse(d.metadata || "{}"); } catch (err) { metadata = {}; }
  var options = {
    appId: d.appId,
    checkout: d.checkout,
    currency: d.currency.toLowerCase(),
    tokenType: d.tokenType,
    capture: d.capture !== "false",
    metadata: metadata,
    inline: true,
    container: frameBox,
    locale: d.locale,
    onSuccess: complete,
    onError: failed
  };
  if (d.amount) { options.amount = parseInt(d.amount, 10); }
  if (d.email) { options.email = d.email; }
  if (d.phone) { options.phoneNumber = d.phone; }
  if (d.name) { options.name = d.name; }
  if (d.paymentTypes) { options.paymentTypes = d.paymentTypes.split(","); }
  if (sub) { for (var k in sub) { if (Object.prototype.hasOwnProperty.call(sub, k)) { options[k] = sub[k]; } } }

  var widget = Checkout.create(options);
  try {
    widget.open(); // inline: mounts the frame in the container
  } catch (err) {
    failed({ fatal: true, message: d.msgLoadFailed });
    return;
  }
  var frame = frameBox.querySelector("iframe");
  if (frame) {
    frame.addEventListener("load", ready);
    // The loader queues a submit until the frame is ready, so the button
    // may work at once.
    payBtn.disabled = false;
  } else {
    failed({ fatal: true, message: d.msgLoadFailed });
  }

  payBtn.addEventListener("click", function () {
    if (busy || finished) { return; }
    setBusy(true);
    setStatus("");
    var p;
    try { p = widget.submit(); } catch (err) { failed(err); return; }
    if (p && typeof p.then === "function") {
      p.then(function (r) { complete(r); }, failed);
    }
  });
})();
