package console

import (
	"strings"
	"testing"
)

func TestShowFormats(t *testing.T) {
	for _, c := range []struct {
		in         []byte
		null       bool
		format     string
		want, note string
	}{
		{nil, true, formatText, "null", ""},
		{[]byte("héllo"), false, formatText, "héllo", ""},
		{[]byte(`{"a":1}`), false, formatJSON, "{\n  \"a\": 1\n}", ""},
		{[]byte("plain"), false, formatJSON, "plain", "not JSON; shown as text"},
		{[]byte{0xff, 0x00}, false, formatText, "00000000  ff 00", "not UTF-8; shown as hex"},
		{[]byte("AB"), false, formatHex, "00000000  41 42", ""},
	} {
		got := show(c.in, c.null, c.format)
		if !strings.HasPrefix(got.Text, c.want) || got.Note != c.note || got.Null != c.null {
			t.Errorf("show(%q, %s) = %+v, want text %q note %q", c.in, c.format, got, c.want, c.note)
		}
	}
}

// TestSafeNextStaysOnTheConsole: the page to return to after signing in
// is a path of the console, never another site.
func TestSafeNextStaysOnTheConsole(t *testing.T) {
	for in, want := range map[string]string{
		"/topics?internal=1": "/topics?internal=1", "": "/", "//evil.example/x": "/",
		"/\\evil.example": "/", "https://evil.example/": "/", "topics": "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
