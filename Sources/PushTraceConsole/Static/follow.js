// pushtrace console: live follow of one notification (docs/console.md). The page works without this script; with
// it, the page listens to the notification's event stream and redraws its answer when a record or a cause arrives.
(function () {
  "use strict";
  var answer = document.getElementById("answer");
  if (!answer || !answer.dataset.follow || !window.EventSource) { return; }
  var source = new EventSource(answer.dataset.follow);
  var pending = false;
  var again = false;
  // The stream opens with every record and the answer as they are now: what the page already shows, unless an
  // upload landed in between. Until that first answer, records are only counted.
  var primed = false;
  var recordsBefore = 0;

  function status(text) {
    var live = document.getElementById("live");
    if (live) { live.textContent = text; }
  }

  // The page itself is fetched again and its answer swapped in: the server draws the waterfall and escapes every
  // stored text, so the script never builds markup from a record.
  function redraw() {
    if (pending) { again = true; return; }
    pending = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("answer");
        var current = document.getElementById("answer");
        if (fresh && current) {
          current.replaceChildren.apply(current, Array.prototype.slice.call(fresh.childNodes).map(function (node) {
            return document.importNode(node, true);
          }));
        }
      })
      .catch(function () { status("Live follow stopped: reload the page to see new records."); })
      .finally(function () {
        pending = false;
        if (again) { again = false; redraw(); }
      });
  }

  source.addEventListener("record", function () {
    if (primed) { redraw(); } else { recordsBefore += 1; }
  });
  source.addEventListener("cause", function (event) {
    var answer;
    try { answer = JSON.parse(event.data); } catch (e) { return; }
    var shown = document.getElementById("cause");
    var same = shown && shown.textContent === answer.cause;
    if (primed || !same || String(recordsBefore) !== document.getElementById("answer").dataset.records) { redraw(); }
    primed = true;
    if (answer.final) { source.close(); }
  });
  source.addEventListener("end", function () { source.close(); });
  source.onerror = function () {
    if (source.readyState === EventSource.CLOSED) { status("Live follow ended: reload the page to follow again."); }
  };
})();
