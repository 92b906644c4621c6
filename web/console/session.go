package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Cookie names. The session cookie maps to credentials held in memory;
// the CSRF cookie is the double-submit token every form repeats.
const (
	sessionCookie = "samsa_console_session"
	csrfCookie    = "samsa_console_csrf"
	csrfField     = "csrf"
)

// sessionLifetime is how long a sign-in lasts.
const sessionLifetime = 8 * time.Hour

// maxSessions bounds the store, so sign-ins cannot grow memory without
// bound; the oldest session goes first.
const maxSessions = 1024

// sessions are the signed-in users, by random token. They live in
// memory: a broker restart signs everyone out, and the credentials never
// reach disk or the browser.
type sessions struct {
	mu   sync.Mutex
	byID map[string]session
}

type session struct {
	who     credentials
	expires time.Time
}

func newSessions() *sessions { return &sessions{byID: map[string]session{}} }

func (s *sessions) add(who credentials, now time.Time) string {
	id := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.byID {
		if now.After(v.expires) {
			delete(s.byID, k)
		}
	}
	if len(s.byID) >= maxSessions {
		var oldest string
		for k, v := range s.byID {
			if oldest == "" || v.expires.Before(s.byID[oldest].expires) {
				oldest = k
			}
		}
		delete(s.byID, oldest)
	}
	s.byID[id] = session{who: who, expires: now.Add(sessionLifetime)}
	return id
}

func (s *sessions) get(id string, now time.Time) (credentials, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[id]
	if !ok || now.After(v.expires) {
		delete(s.byID, id)
		return credentials{}, false
	}
	return v.who, true
}

func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// loginRequired reports whether the console asks who is there.
func (c *Console) loginRequired() bool { return len(c.opts.Mechanisms) > 0 }

// user returns the signed-in credentials of r (nil, true without SASL),
// or false when r must sign in first.
func (c *Console) user(r *http.Request) (*credentials, bool) {
	if !c.loginRequired() {
		return nil, true
	}
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, false
	}
	who, ok := c.sessions.get(ck.Value, time.Now())
	if !ok {
		return nil, false
	}
	return &who, true
}

// csrfToken returns the browser's CSRF token, setting a new one when it
// has none.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) >= 32 {
		return ck.Value
	}
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return tok
}

// checkCSRF refuses a mutation that another site could have sent: the
// form must repeat the browser's token, and the browser, when it says
// where the request comes from, must say this origin.
func checkCSRF(r *http.Request) *pageError {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return &pageError{Status: http.StatusForbidden, Title: "Cross-site request refused",
				Detail: "This form was sent from " + o + ", not from the console itself. Open the console and submit it again."}
		}
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return &pageError{Status: http.StatusForbidden, Title: "Cross-site request refused",
			Detail: "The browser reports this request as " + s + ". Open the console and submit the form again."}
	}
	ck, err := r.Cookie(csrfCookie)
	form := r.PostFormValue(csrfField)
	if err != nil || form == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(form)) != 1 {
		return &pageError{Status: http.StatusForbidden, Title: "Form expired",
			Detail: "The form's security token does not match this browser's. Reload the page and submit it again."}
	}
	return nil
}
