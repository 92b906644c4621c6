package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/*.js static/*.css
var staticDir embed.FS

func staticFiles() http.Handler {
	sub, err := fs.Sub(staticDir, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the folder
	}
	return http.FileServerFS(sub)
}

// pages are the parsed templates: each page is layout.html plus its own
// file, so every page defines "title" and "content" without clashing.
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"bytes":  humanBytes,
	"millis": func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000Z") },
	"join":   func(xs []int32) string { return joinInt32(xs) },
}

func mustParsePages() *pages {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html"))
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		if n == "templates/layout.html" {
			continue
		}
		t := template.Must(template.Must(base.Clone()).ParseFS(templateFiles, n))
		p.byName[strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")] = t
	}
	return p
}

// view is what every page template sees.
type view struct {
	Title    string
	Nav      string // the menu entry to highlight
	User     string // signed-in user, "" without SASL
	ReadOnly bool
	CSRF     string
	Flash    string
	Data     any
}

// render writes page name with data; a template error becomes an error
// page rather than half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	v.ReadOnly = c.opts.ReadOnly
	v.CSRF = csrfToken(w, r)
	if who, ok := c.user(r); ok && who != nil {
		v.User = who.User
	}
	if v.Flash == "" {
		v.Flash = r.URL.Query().Get("flash")
	}
	layout := "layout.html"
	if r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Target") != "" {
		layout = "fragment" // htmx swaps a part of the page
	}
	var buf bytes.Buffer
	t, ok := c.pages.byName[name]
	if !ok {
		panic("console: no template " + name)
	}
	if err := t.ExecuteTemplate(&buf, layout, v); err != nil {
		c.opts.Logger.Error("console template", "page", name, "err", err)
		http.Error(w, "the console could not draw this page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

func humanBytes(n int64) string {
	if n < 0 {
		return "unknown"
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func joinInt32(xs []int32) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
