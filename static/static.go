// Package static embeds the files Kessai serves as they are: the embed
// loader, stylesheets, images and, once built, the widget's WebAssembly.
// It lives at the top of the module because //go:embed cannot reach "..".
package static

import "embed"

// FS holds every static file.
//
//go:embed *.css *.js
var FS embed.FS
