// samsa console: the little behaviour plain HTML lacks. Everything works
// without it; htmx (loaded beside it) refreshes the lag table.
document.addEventListener("DOMContentLoaded", () => {
  // Message browser: only the input the chosen starting point uses is enabled.
  const from = document.getElementById("browse-from");
  if (from) {
    const sync = () => {
      document.getElementById("browse-offset").disabled = from.value !== "offset";
      document.getElementById("browse-timestamp").disabled = from.value !== "timestamp";
    };
    from.addEventListener("change", sync);
    sync();
  }
  // Offset reset: a real reset asks once more.
  const reset = document.getElementById("reset");
  if (reset) {
    reset.addEventListener("submit", (e) => {
      if (!document.getElementById("reset-dryrun").checked && !window.confirm("Commit the new offsets for this group?")) {
        e.preventDefault();
      }
    });
  }
});
