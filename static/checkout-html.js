/*! Kessai checkout loader, the HTML mode: see the README. checkout.js loads
 * it for a page with a <span data-app-id …>; it works through checkout.js. */
(function (w, d) {
  "use strict";
  var K = w.KessaiCheckout;
  if (!K || !K.html) { return; }
  // data-* attributes that are options, not metadata.
  var KNOWN = " app-id checkout amount currency capture email metadata token-type locale inline inline-item-style" +
    " auto-submit payment-type payment-types text button-text button-class phone-number ";

  K.html(function (x) {
    var bool = x.bool, seen = new WeakSet();
    function hidden(form, name, value) {
      var i = form.querySelector("input[name='" + name + "']");
      if (!i) { i = d.createElement("input"); i.type = "hidden"; i.name = name; form.appendChild(i); }
      i.value = value;
    }
    return function (span) {
      var form = span.closest("form");
      if (seen.has(span) || !form) { return; }
      seen.add(span);
      var ds = span.dataset, md = x.meta(ds.metadata) || {}, at = span.attributes, i, a;
      for (i = 0; i < at.length; i++) {
        a = at[i].name;
        if (!a.indexOf("data-") && KNOWN.indexOf(" " + a.slice(5) + " ") < 0 && a.indexOf("data-subscription-")) { md[a.slice(5).replace(/-/g, "_")] = at[i].value; }
      }
      var auto = bool(ds.autoSubmit, false), inline = bool(ds.inline, false), pending = false;
      var o = {
        appId: ds.appId, checkout: ds.checkout, amount: ds.amount, currency: ds.currency, capture: ds.capture,
        email: ds.email, phoneNumber: ds.phoneNumber, tokenType: ds.tokenType, locale: ds.locale, metadata: md,
        inline: inline, inlineContainer: span, inlineItemStyle: ds.inlineItemStyle,
        paymentTypes: ds.paymentTypes || ds.paymentType,
        onSuccess: function (r) {
          hidden(form, "univapayTokenId", r.tokenId || "");
          if (r.chargeId) { hidden(form, "univapayChargeId", r.chargeId); }
          if (r.subscriptionId) { hidden(form, "univapaySubscriptionId", r.subscriptionId); }
          // A konbini payment's or bank transfer's instructions stay on
          // screen: the form goes once the shopper has closed them (in
          // the modal) or submits it again (inline).
          if (r.status === "awaiting") { pending = true; return; }
          if (auto) { HTMLFormElement.prototype.submit.call(form); }
        },
        closed: function () {
          if (pending && auto) { pending = false; HTMLFormElement.prototype.submit.call(form); }
        }
      };
      for (i in ds) { if (!i.indexOf("subscription")) { o[i] = ds[i]; } }
      var c = x.create(o);
      if (inline) {
        try { c.open(); } catch (e) { return console.error(e); }
        if (auto) {
          form.addEventListener("submit", function (e) {
            var t = form.querySelector("input[name='univapayTokenId']");
            if (!t || !t.value) { e.preventDefault(); c.submit().catch(function () { /* shown in the frame */ }); }
          });
        }
        return;
      }
      var b = d.createElement("button");
      b.type = "button";
      b.textContent = ds.text || ds.buttonText || x.button(ds.locale);
      b.className = ds.buttonClass || "kessai-checkout-button univapay-checkout-button";
      if (!ds.buttonClass) {
        x.css(b, {
          minHeight: "44px", padding: "0 22px", border: "0", borderRadius: "8px", background: "#1f5eff", color: "#fff",
          font: "600 15px/1.2 system-ui, -apple-system, 'Hiragino Sans', sans-serif", cursor: "pointer"
        });
      }
      b.addEventListener("click", function () { c.open(); });
      span.appendChild(b);
    };
  });
})(window, document);
