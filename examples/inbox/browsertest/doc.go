// Package browsertest tests the approvals inbox in a real headless
// Chromium, driven from Go by chromedp: the demo's refund approved in the
// page, inputs that stay text, refused forms and users, and the store
// going down. It is a module of its own so that the core's go.mod does not
// require chromedp. Run it with scripts/e2e-browser.sh, which installs
// Chromium from Debian's packages when it is missing.
package browsertest
