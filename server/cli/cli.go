// Package cli holds the kessai commands besides serving: apptoken and
// migrate, which work on a gateway's store with its configuration, and
// listen and trigger, which reach a running gateway only through its
// public API, as a developer's tools would. Each takes its arguments
// after the command's name and writes what it reports to the writer it
// is given; the binary's main package dispatches to them.
package cli
