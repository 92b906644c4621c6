package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// pageFunc draws one page from the cluster through k.
type pageFunc func(w http.ResponseWriter, r *http.Request, k *kafka) error

// read serves a page that changes nothing: signed in (when SASL is on),
// with a client of its own.
func (c *Console) read(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := c.user(r)
		if !ok {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), c.opts.Timeout)
		defer cancel()
		k, err := c.open(ctx, who)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		defer k.close()
		if err := fn(w, r, k); err != nil {
			c.fail(w, r, err)
		}
	})
}

// write serves a mutation: refused in read-only mode and unless the
// form comes from the console itself.
func (c *Console) write(fn pageFunc) http.Handler {
	page := c.read(fn)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.opts.ReadOnly {
			c.fail(w, r, &pageError{Status: http.StatusForbidden, Title: "Read-only console",
				Detail: "This console only shows (samsa.console.read.only=true); use a Kafka client or turn read-only mode off to make changes."})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 2<<20)
		if pe := checkCSRF(r); pe != nil {
			c.fail(w, r, pe)
			return
		}
		page.ServeHTTP(w, r)
	})
}

// redirect answers a mutation with the page that shows its result
// (post/redirect/get: reloading does not repeat it).
func redirect(w http.ResponseWriter, r *http.Request, path, flash string) {
	if flash != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "flash=" + url.QueryEscape(flash)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if !c.loginRequired() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "login", view{Title: "Sign in", Data: loginData{Next: safeNext(r.URL.Query().Get("next"))}})
}

type loginData struct {
	Next, User, Error string
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if !c.loginRequired() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if pe := checkCSRF(r); pe != nil {
		c.fail(w, r, pe)
		return
	}
	user, password, next := r.PostFormValue("user"), r.PostFormValue("password"), safeNext(r.PostFormValue("next"))
	ctx, cancel := context.WithTimeout(r.Context(), c.opts.Timeout)
	defer cancel()
	who, err := c.authenticate(ctx, user, password)
	if err != nil {
		c.opts.Logger.Info("console sign-in refused", "user", user, "err", err)
		c.render(w, r, http.StatusUnauthorized, "login", view{Title: "Sign in",
			Data: loginData{Next: next, User: user, Error: "The broker did not accept this user name and password (" + err.Error() + ")."}})
		return
	}
	id := c.sessions.add(*who, time.Now())
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(sessionLifetime / time.Second)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if pe := checkCSRF(r); pe != nil {
		c.fail(w, r, pe)
		return
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		c.sessions.remove(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in redirect on the console: a path, never
// another site.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if next == "" || err != nil || u.IsAbs() || u.Host != "" || len(next) < 1 || next[0] != '/' || (len(next) > 1 && (next[1] == '/' || next[1] == '\\')) {
		return "/"
	}
	return next
}
