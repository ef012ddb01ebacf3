// Package dashboard tests `flotilla dashboard` and the hub's dashboard against a real local fleet
// (build tag integration): the API with viewers' own tokens (who sees what, 401s and 403s, paging,
// live updates), and, in headless Chromium driven by chromedp, each view against what the API
// holds, a label change appearing without a reload, RBAC, accessibility (axe-core) and the time
// to first render with 1,000 clusters. Screenshots go to the test's artifact directory and, when
// FLOTILLA_DASHBOARD_SCREENSHOTS names a directory, there (make dashboard-screenshots).
package dashboard
