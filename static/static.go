// Package static embeds the files Kessai serves as they are: the embed
// loader, stylesheets, images and, once built, the widget's WebAssembly.
// It lives at the top of the module because //go:embed cannot reach "..".
package static

import "embed"

// FS holds every static file: the loader (checkout.js), the frame's and
// pages' scripts and styles, images under img/ (brand marks, icons), and
// build/, where make puts the widget's WebAssembly and the matching
// wasm_exec.js (build/README.md keeps the folder there when they are not
// built, so that the gateway still builds without them), and demo/, the
// demo storefront's product pictures.
//
//go:embed *.css *.js img build demo
var FS embed.FS
