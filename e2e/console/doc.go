// Package console holds the end-to-end tests of the web console
// (web/console): a broker started in-process exactly as `samsa serve`
// starts it, with samsa.http.listeners on, driven by a real headless
// Chromium (Debian's chromium package, through chromedp) and checked
// against franz-go clients: pages load, a topic created through the
// console exists, a record produced with franz-go shows in the message
// browser and one produced through the console reaches franz-go, a
// group's lag falls as its consumer reads, offset resets with a dry run.
// Plain HTTP tests cover what needs no browser: CSRF refusals, read-only
// mode and signing in with the broker's SASL users.
//
// Chromium is installed by `make deps` (scripts/install-deps.sh); the
// browser tests skip, saying so, only when no chromium binary is found.
// With SAMSA_CONSOLE_SCREENSHOTS=<dir> they save the screenshots shown in
// docs/console.md.
package console
