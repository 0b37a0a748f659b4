// The board page's only script, inlined into the page and dependency-free. It fetches only
// when the page came from `refill board --serve` (data-poll set), never from disk.
(function () {
  var body = document.body;
  var toggle = document.getElementById("only-attention");
  if (toggle) {
    toggle.addEventListener("change", function () {
      body.classList.toggle("only-attention", toggle.checked);
    });
  }
  var poll = body.getAttribute("data-poll");
  if (!poll) { return; }
  var fingerprint = body.getAttribute("data-fingerprint");
  var every = 1000 * (Number(body.getAttribute("data-poll-seconds")) || 2);
  var live = document.getElementById("live");
  function check() {
    fetch(poll, { cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (state) {
        if (state && state.fingerprint !== fingerprint) { window.location.reload(); return; }
        if (live) { live.textContent = "live: checked " + new Date().toLocaleTimeString(); }
        window.setTimeout(check, every);
      })
      .catch(function () {
        if (live) { live.textContent = "server stopped: this is the last board it served"; }
      });
  }
  window.setTimeout(check, every);
})();
