/*! Kessai checkout loader: see the README. */
// KessaiCheckout (= UnivapayCheckout). Card data stays in the gateway's
// frame; no inline code or style. The gateway serves this file without its
// comment lines and indentation, with its texts written in.
(function (w, d) {
  "use strict";
  if (w.KessaiCheckout && w.KessaiCheckout.kessai) { return; }
  var SRC = "kessai-checkout", V = 1, GW = "", all = {};
  // GW stays "" when the script was not loaded by src.
  try { GW = new URL(d.currentScript.src).origin; } catch (e) { }
  var TEXT = /*kessai:loader-texts*/{};

  function rid() {
    var b = crypto.getRandomValues(new Uint8Array(12)), s = "";
    for (var i = 0; i < b.length; i++) { s += (b[i] + 256).toString(16).slice(1); }
    return s;
  }
  // message.Negotiate's rule (a test holds this to it).
  function lang(l) {
    for (var a = [l].concat(navigator.languages), i = 0, m; i < a.length; i++) {
      if ((m = /^(ja|en)([-_][a-z\d]{1,8})*$/i.exec(a[i]))) { return m[1].toLowerCase(); }
    }
    return "en";
  }
  function css(el, p) { for (var k in p) { el.style[k] = p[k]; } return el; }
  function mk(tag, p) { return css(d.createElement(tag), p || {}); }
  function drop(el) { if (el && el.parentNode) { el.parentNode.removeChild(el); } }
  function emit(name, detail) {
    ["univapay:", "kessai:"].forEach(function (p) { w.dispatchEvent(new CustomEvent(p + name, { detail: detail })); });
  }
  function call(fn, arg) {
    if (typeof fn === "function") { try { fn(arg); } catch (e) { setTimeout(function () { throw e; }); } }
  }
  function bool(v, dflt) { return v == null || v === "" ? dflt : v === true || v === "true" || v === "1" || v === 1; }
  // metadata: an object, or "k:v,k2:v2" as WooCommerce writes it.
  function meta(m) {
    if (!m || typeof m === "object") { return m || null; }
    var out = {};
    String(m).split(",").forEach(function (kv) {
      var i = kv.indexOf(":");
      if (i > 0) { out[kv.slice(0, i).trim()] = kv.slice(i + 1).trim(); }
    });
    return out;
  }
  function failure(code, msg, x) {
    var e = new Error(msg || code);
    e.code = code; e.fatal = !!(x && x.fatal);
    e.chargeId = (x && x.chargeId) || null; e.tokenId = (x && x.tokenId) || null;
    // EC-CUBE reads e.error.error.message.
    e.error = { code: code, message: msg, error: { code: code, message: msg } };
    return e;
  }

  function Checkout(o) {
    o = o || {};
    var n = {}, k;
    for (k in o) { n[k] = o[k]; }
    n.appId = o.appId || o.appJwt;
    n.checkout = String(o.checkout || (o.amount ? "payment" : "token")).toLowerCase() === "token" ? "token" : "payment";
    n.currency = o.currency ? String(o.currency).toUpperCase() : "";
    n.capture = bool(o.capture, true);
    n.metadata = meta(o.metadata);
    n.inline = bool(o.inline, false);
    n.box = o.inlineContainer || o.container || o.target;
    n.locale = o.locale === "auto" ? "" : o.locale;
    n.t = TEXT[lang(o.locale)];
    n.pt = [].concat(o.paymentTypes || o.paymentType || []).join();
    this.o = n;
    this.id = rid();
    this.queue = [];
    this.pending = {};
    all[this.id] = this;
  }
  var P = Checkout.prototype;

  P.post = function (m) {
    m.source = SRC; m.v = V; m.instance = this.id;
    if (this.f && this.f.contentWindow) { this.f.contentWindow.postMessage(m, GW); }
  };
  P.send = function (m) {
    var self = this;
    if (this.ready) { this.post(m); } else { this.queue.push(function () { self.post(m); }); }
  };

  P.frame = function (h) {
    var o = this.o, q = [], self = this;
    function add(k, v) { if (v != null && v !== "") { q.push(k + "=" + encodeURIComponent(v)); } }
    add("appId", o.appId); add("origin", location.origin); add("instance", this.id); add("checkout", o.checkout);
    add("amount", o.amount); add("currency", o.currency); add("tokenType", o.tokenType);
    add("capture", o.capture ? "" : "false"); add("email", o.email); add("phoneNumber", o.phoneNumber);
    add("metadata", o.metadata && JSON.stringify(o.metadata)); add("locale", o.locale); add("inline", o.inline ? "true" : "");
    add("inlineItemStyle", o.inlineItemStyle);
    add("paymentTypes", o.pt);
    for (var k in o) { if (!k.indexOf("subscription")) { add(k, o[k]); } }
    var f = mk("iframe", {
      display: "block", width: "100%", height: h + "px", border: "0", margin: "0", padding: "0",
      background: "transparent", colorScheme: "normal", overflow: "hidden", transition: "height .15s"
    });
    f.title = o.t[2];
    // clipboard-write: the copy buttons of a konbini payment's or bank
    // transfer's instructions.
    f.setAttribute("allow", "payment; clipboard-write");
    f.setAttribute("referrerpolicy", "origin");
    f.src = GW + "/widget/frame?" + q.join("&");
    this.f = f;
    this.ready = false;
    function check() {
      if (!self.ready && self.f === f) {
        console.error("KessaiCheckout: the widget frame did not load. Is " + location.origin + " one of the app token's domains?");
        self.fail({ code: "FRAME_LOAD_FAILED", message: o.t[3], fatal: true });
      }
    }
    // A refused frame (frame-ancestors) never gets ready.
    f.addEventListener("load", function () {
      if (self.ready || self.f !== f) { return; }
      clearTimeout(self.timer);
      self.timer = setTimeout(function () {
        if (!self.ready) { f.style.visibility = "hidden"; self.timer = setTimeout(check, 1400); }
      }, 100);
    });
    clearTimeout(this.timer);
    this.timer = setTimeout(check, 30000);
    return f;
  };

  P.open = function () {
    if (!this.o.appId || !GW) { throw new Error("KessaiCheckout: appId and the loader's src are required"); }
    if (this.o.inline) { return this.mount(); }
    if (this.box) { return; }
    var self = this, body = d.body, de = d.documentElement;
    function mq(q) { return w.matchMedia(q).matches; }
    var still = mq("(prefers-reduced-motion: reduce)"), narrow = mq("(max-width: 440px)");
    this.opener = d.activeElement;
    var ov = mk("div", {
      position: "fixed", top: "0", right: "0", bottom: "0", left: "0", zIndex: "2147483646", display: "flex",
      alignItems: "flex-start", overflowY: "auto", padding: narrow ? "0" : "max(16px, 4vh) 12px", boxSizing: "border-box",
      background: "rgba(16, 22, 34, .56)", opacity: "0", transition: still ? "" : "opacity .18s"
    });
    var box = mk("div", {
      position: "relative", width: "100%", maxWidth: "440px", margin: "0 auto auto", borderRadius: narrow ? "0" : "14px",
      overflow: "hidden", outline: "none", minHeight: "120px",
      transform: still ? "" : "translateY(10px) scale(.985)", transition: still ? "" : "transform .2s"
    });
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-modal", "true");
    box.setAttribute("aria-label", this.o.t[1]);
    box.tabIndex = -1;
    var spin = mk("div", {
      position: "absolute", top: "50%", left: "50%", width: "34px", height: "34px", margin: "-17px 0 0 -17px",
      border: "3px solid rgba(255, 255, 255, .3)", borderTopColor: "#fff", borderRadius: "50%", boxSizing: "border-box"
    });
    if (spin.animate) { spin.animate([{ transform: "rotate(0)" }, { transform: "rotate(360deg)" }], { duration: 800, iterations: Infinity }); }
    var f = css(this.frame(520), { minHeight: narrow ? "100vh" : "" });
    // Tab out of the frame lands here and goes back in.
    function guard() {
      var g = mk("div", { position: "absolute", width: "1px", height: "1px", overflow: "hidden" });
      g.tabIndex = 0;
      g.addEventListener("focus", function () { f.focus(); self.post({ type: "focus" }); });
      return g;
    }
    box.appendChild(guard()); box.appendChild(f); box.appendChild(guard());
    ov.appendChild(spin); ov.appendChild(box);
    ov.addEventListener("mousedown", function (e) { self.down = e.target === ov; });
    ov.addEventListener("click", function (e) { if (e.target === ov && self.down) { self.close(); } });
    this.key = function (e) { if (e.key === "Escape" || e.key === "Esc") { e.preventDefault(); self.close(); } };
    d.addEventListener("keydown", this.key, true);
    this.saved = [body.style.overflow, de.style.overflow, body.style.paddingRight];
    var gap = w.innerWidth - de.clientWidth;
    body.style.overflow = de.style.overflow = "hidden";
    if (gap > 0) { body.style.paddingRight = gap + "px"; }
    this.ov = ov; this.box = box; this.spin = spin;
    body.appendChild(ov);
    box.focus();
    requestAnimationFrame(function () { ov.style.opacity = "1"; box.style.transform = "none"; });
    call(this.o.opened);
    emit("opened", { instance: this.id });
  };

  P.close = function () {
    var ov = this.ov, s = this.saved, body = d.body;
    if (!ov) { return; }
    clearTimeout(this.timer); clearTimeout(this.later);
    d.removeEventListener("keydown", this.key, true);
    body.style.overflow = s[0]; d.documentElement.style.overflow = s[1]; body.style.paddingRight = s[2];
    ov.style.opacity = "0";
    setTimeout(function () { drop(ov); }, 180);
    this.ov = this.box = this.spin = this.f = null;
    this.ready = false; this.queue = [];
    this.rejectAll("CLOSED");
    if (this.opener && this.opener.focus && d.contains(this.opener)) { this.opener.focus(); }
    call(this.o.closed);
    emit("closed", { instance: this.id });
  };

  P.mount = function () {
    var c = this.o.box;
    if (this.f) { return; }
    if (typeof c === "string") { c = d.querySelector(c); }
    if (!c) { throw new Error("KessaiCheckout: inline mode needs inlineContainer (an element or a selector)"); }
    var f = this.frame(300);
    f.name = "univapay-checkout-connector";
    c.appendChild(f);
  };

  P.submit = function () {
    var self = this;
    return new Promise(function (resolve, reject) {
      if (!self.f) { return reject(failure("NOT_OPEN", "the widget is not open")); }
      var id = rid();
      self.pending[id] = [resolve, reject];
      self.send({ type: "submit", requestId: id });
    });
  };

  P.destroy = function () {
    this.close();
    drop(this.f);
    this.f = null;
    this.rejectAll("CLOSED");
    delete all[this.id];
  };

  P.rejectAll = function (code, e) {
    for (var id in this.pending) { this.pending[id][1](e || failure(code, code.toLowerCase())); }
    this.pending = {};
  };

  P.fail = function (m) {
    var e = failure(m.code || "UNKNOWN_ERROR", m.message || "", m), p = this.pending[m.requestId], self = this;
    if (p) { delete this.pending[m.requestId]; p[1](e); } else if (m.fatal) { this.rejectAll(e.code, e); }
    if (m.code === "FRAME_LOAD_FAILED") { this.f.style.display = "none"; }
    if (this.box && m.code === "FRAME_LOAD_FAILED") {
      drop(this.spin);
      var note = mk("div", { background: "#fff", color: "#1a1d24", padding: "24px", font: "15px/1.5 system-ui, sans-serif", textAlign: "center" });
      var ok = mk("button", { display: "block", margin: "16px auto 0", padding: "8px 20px", font: "inherit" });
      note.setAttribute("role", "alert");
      note.textContent = e.message;
      ok.type = "button"; ok.textContent = "OK";
      ok.onclick = function () { self.close(); };
      note.appendChild(ok);
      this.box.appendChild(note);
      ok.focus();
    }
    call(this.o.onError, e);
    emit("error", e);
  };

  P.handle = function (m) {
    var self = this, f = this.f;
    if (this.spin) {
      drop(this.spin); this.spin = null;
      this.box.style.boxShadow = "0 24px 64px rgba(0, 0, 0, .34)";
    }
    switch (m.type) {
      case "ready":
        this.ready = true;
        clearTimeout(this.timer);
        f.style.visibility = "";
        this.queue.splice(0).forEach(function (fn) { fn(); });
        if (this.box) { f.focus(); this.post({ type: "focus" }); }
        break;
      case "resize":
        if (m.height > 0 && m.height < 1e4) { f.style.height = Math.ceil(m.height) + "px"; }
        break;
      case "token-created":
        call(this.o.onTokenCreated, m.tokenId);
        emit("token-created", { tokenId: m.tokenId });
        break;
      case "success":
        var r = {
          response: m.response, status: m.status, tokenId: m.tokenId || null, chargeId: m.chargeId || null,
          token: m.tokenId || null, charge: m.chargeId || null, subscriptionId: m.subscriptionId || null
        };
        var p = this.pending[m.requestId], id;
        if (p) { delete this.pending[m.requestId]; p[0](r); }
        for (id in this.pending) { this.pending[id][0](r); }
        this.pending = {};
        call(this.o.onSuccess, r);
        emit("success", r);
        if (r.subscriptionId) { emit("subscription-created", r); }
        // A payment that awaits its shopper (konbini, bank transfer) has
        // its instructions on screen: the shopper closes them.
        if (this.box && m.status !== "awaiting") { this.later = setTimeout(function () { self.close(); }, 1600); }
        break;
      case "error":
        this.fail(m);
        break;
      case "close":
        this.close();
    }
  };

  w.addEventListener("message", function (e) {
    var m = e.data, c = m && all[m.instance];
    if (e.origin === GW && c && c.f && e.source === c.f.contentWindow && m.source === SRC && m.v === V) { c.handle(m); }
  });

  function create(o) {
    var c = new Checkout(o);
    return {
      open: function () { return c.open(); },
      close: function () { return c.close(); },
      submit: function () { return c.submit(); },
      destroy: function () { return c.destroy(); },
      get iframe() { return c.f; }
    };
  }

  // KessaiCheckout.submit(iframe or an element holding it).
  function submit(el) {
    for (var id in all) {
      var f = all[id].f;
      if (f && el && (f === el || (el.contains && el.contains(f)))) { return all[id].submit(); }
    }
    return Promise.reject(failure("NOT_FOUND", "no Kessai widget frame there"));
  }

  // ---- HTML mode: <span data-app-id …> in a <form>. Its code is
  // checkout-html.js, loaded only by a page that has such a span; it hands
  // its setup to html(), which takes the spans found until then. ----
  var spans = [], setup, loading;
  function scan(node) {
    node = node || d;
    if (node.matches && node.matches("span[data-app-id]")) { spans.push(node); }
    [].push.apply(spans, node.querySelectorAll ? node.querySelectorAll("span[data-app-id]") : []);
    if (setup) { spans.splice(0).forEach(setup); } else if (spans.length && !loading) {
      loading = d.createElement("script");
      loading.src = GW + "/static/checkout-html.js";
      (d.head || d.documentElement).appendChild(loading);
    }
  }
  function html(make) {
    setup = setup || make({ create: create, bool: bool, meta: meta, css: css, button: function (l) { return TEXT[lang(l)][0]; } });
    spans.splice(0).forEach(setup);
  }
  function start() {
    scan(d);
    new MutationObserver(function (ms) {
      ms.forEach(function (m) { [].forEach.call(m.addedNodes, function (n) { if (n.nodeType === 1) { scan(n); } }); });
    }).observe(d.documentElement, { childList: true, subtree: true });
  }
  if (d.readyState === "loading") { d.addEventListener("DOMContentLoaded", start); } else { start(); }

  w.KessaiCheckout = w.UnivapayCheckout = { create: create, submit: submit, scan: scan, version: V, kessai: true, html: html };
})(window, document);
