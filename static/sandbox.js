// Kessai sandbox: the 3-D Secure challenge and the wallets' payment
// screens (web/sandboxpages/approval.go), and the konbini and bank-transfer
// instructions (slip.go). The pages work without it; it adds a countdown,
// one submission per click, and a poll of the approval's status so that a
// page left open follows what happened elsewhere (the shopper paid on the
// phone that scanned the QR code, a deposit arrived, the time ran out):
// once the status is no longer "awaiting", or a bank transfer's deposits
// changed, it reloads. On the instructions it shows the copy and print
// buttons, which need it. Its addresses and texts come from data-*
// attributes (the pages' CSP allows no inline script).
(function () {
  "use strict";
  var body = document.body;
  var d = body.dataset;
  var POLL_MS = Number(d.pollMs) || 1500;
  var leaving = false;
  var submitting = false;

  // One submission: a second click while the first is on its way does
  // nothing. The buttons are disabled after the form has taken the
  // clicked one's value (a disabled button sends none).
  var forms = document.querySelectorAll("form.sb-act");
  for (var i = 0; i < forms.length; i++) {
    forms[i].addEventListener("submit", function (ev) {
      if (submitting) {
        ev.preventDefault();
        return;
      }
      submitting = true;
      setTimeout(function () {
        var buttons = document.querySelectorAll("form.sb-act button");
        for (var j = 0; j < buttons.length; j++) buttons[j].disabled = true;
      }, 0);
    });
  }

  // Copy a number: the clipboard where the browser offers it (a secure
  // context), else the number selected for the shopper to copy.
  var said = document.getElementById("sb-copied");
  var say = function (text) {
    if (!said) return;
    said.textContent = "";
    setTimeout(function () {
      said.textContent = text;
    }, 50);
  };
  var select = function (el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  };
  var copies = document.querySelectorAll("button.sb-copy[data-copy]");
  for (var c = 0; c < copies.length; c++) {
    var button = copies[c];
    button.hidden = false;
    button.addEventListener("click", function (ev) {
      var b = ev.currentTarget;
      var el = document.getElementById(b.getAttribute("data-copy"));
      if (!el) return;
      var text = el.textContent.trim();
      var failed = function () {
        select(el);
        say(said ? said.getAttribute("data-copy-failed") : "");
      };
      if (!navigator.clipboard || !window.isSecureContext) {
        failed();
        return;
      }
      navigator.clipboard.writeText(text).then(function () {
        b.classList.add("sb-copy-done");
        setTimeout(function () {
          b.classList.remove("sb-copy-done");
        }, 1500);
        say(said ? said.getAttribute("data-copied") + ": " + text : "");
      }, failed);
    });
  }
  var print = document.getElementById("sb-print");
  if (print && window.print) {
    print.hidden = false;
    print.addEventListener("click", function () {
      window.print();
    });
  }

  if (d.status !== "awaiting" || !d.statusUrl || !d.pageUrl) return;

  function check() {
    if (leaving || submitting) return;
    fetch(d.statusUrl, { cache: "no-store", credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        return r.ok ? r.json() : null;
      })
      .then(function (s) {
        if (!s || leaving || submitting) return;
        var deposited = d.deposited !== undefined && s.deposited !== undefined && String(s.deposited) !== d.deposited;
        if (s.status === "awaiting" && !deposited) return;
        leaving = true;
        // A GET of the page: it may have been reached by a POST, which a
        // reload would send again.
        location.replace(d.pageUrl);
      })
      .catch(function () {
        // offline for a moment: the next poll tries again
      });
  }
  setInterval(check, POLL_MS);

  var timer = document.getElementById("sb-time-left");
  if (timer) {
    var end = Date.now() + Number(timer.getAttribute("data-expires-in")) * 1000;
    var tick = function () {
      var s = Math.max(0, Math.ceil((end - Date.now()) / 1000));
      var text = Math.floor(s / 60) + ":" + (s % 60 < 10 ? "0" : "") + (s % 60);
      if (timer.textContent !== text) timer.textContent = text;
      if (s === 0) {
        check();
        return;
      }
      setTimeout(tick, 250);
    };
    tick();
  }
})();
