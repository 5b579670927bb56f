// The demo storefront's own script: it reads the store's checkout settings
// from the gateway with the browser token, cross-origin, as the widget will.
(function () {
  "use strict";
  var me = document.currentScript;
  var gateway = me.getAttribute("data-gateway");
  var appId = me.getAttribute("data-app-id");
  var status = document.getElementById("checkout-status");
  fetch(gateway + "/checkout_info", { headers: { Authorization: "Bearer " + appId, Accept: "application/json" } })
    .then(function (res) {
      return res.json().then(function (body) { return { ok: res.ok, body: body }; });
    })
    .then(function (r) {
      if (!r.ok) { throw new Error(r.body.code || "error"); }
      status.textContent = "reachable";
      status.className = "status-ok";
      document.getElementById("store-name").textContent = r.body.name;
      document.getElementById("store-mode").textContent = r.body.mode;
      document.getElementById("store-brands").textContent =
        r.body.supported_brands.map(function (b) { return b.brand; }).join(", ");
    })
    .catch(function (e) {
      status.textContent = "unreachable: " + e.message;
      status.className = "status-error";
    });
})();
