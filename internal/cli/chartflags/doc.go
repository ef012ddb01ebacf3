// Package chartflags holds the flags of the install modes (`flotilla init --install`, `flotilla
// join --install`, `flotilla uninstall`): which namespace, image and chart values, as `helm
// install --set` takes them, and how long to wait.
package chartflags
