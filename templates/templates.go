// Package templates embeds the html/template files of Kessai's pages. It
// lives at the top of the module because //go:embed cannot reach "..".
package templates

import "embed"

// FS holds every template.
//
//go:embed *.html
var FS embed.FS
