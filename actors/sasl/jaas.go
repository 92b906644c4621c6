package sasl

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// JAAS is one login module entry of a sasl.jaas.config value:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required
//	    username="admin" password="admin-secret" user_alice="alice-secret";
type JAAS struct {
	Module  string // the login module's class name
	Flag    string // required, requisite, sufficient or optional
	Options map[string]string
}

// ErrJAAS is wrapped by every JAAS syntax error.
var ErrJAAS = errors.New("sasl: invalid JAAS configuration")

// ParseJAAS reads a sasl.jaas.config value: exactly one login module, as
// Kafka requires of the inline form. Option values are bare words or
// double-quoted strings (a backslash escapes the next character).
func ParseJAAS(s string) (JAAS, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return JAAS{}, err
	}
	if len(toks) < 3 || toks[len(toks)-1] != ";" {
		return JAAS{}, fmt.Errorf("%w: expected `<LoginModule> <flag> key=value ... ;`", ErrJAAS)
	}
	j := JAAS{Module: toks[0], Flag: strings.ToLower(toks[1]), Options: map[string]string{}}
	switch j.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return JAAS{}, fmt.Errorf("%w: login module flag %q is not required, requisite, sufficient or optional", ErrJAAS, toks[1])
	}
	rest := toks[2 : len(toks)-1]
	for len(rest) > 0 {
		if len(rest) < 3 || rest[1] != "=" {
			return JAAS{}, fmt.Errorf("%w: expected key=value near %q", ErrJAAS, rest[0])
		}
		j.Options[rest[0]] = rest[2]
		rest = rest[3:]
	}
	return j, nil
}

// jaasTokens splits s into words, quoted strings (unquoted), "=" and ";".
// Anything after the first ";" other than white space is an error: one
// module per value.
func jaasTokens(s string) ([]string, error) {
	var toks []string
	r := []rune(s)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '=' || c == ';':
			if len(toks) > 0 && toks[len(toks)-1] == ";" {
				return nil, fmt.Errorf("%w: more than one login module", ErrJAAS)
			}
			toks = append(toks, string(c))
			i++
		case c == '"':
			var b strings.Builder
			i++
			for ; i < len(r) && r[i] != '"'; i++ {
				if r[i] == '\\' && i+1 < len(r) {
					i++
				}
				b.WriteRune(r[i])
			}
			if i >= len(r) {
				return nil, fmt.Errorf("%w: unterminated quoted value", ErrJAAS)
			}
			i++
			toks = append(toks, b.String())
		default:
			if len(toks) > 0 && toks[len(toks)-1] == ";" {
				return nil, fmt.Errorf("%w: more than one login module", ErrJAAS)
			}
			start := i
			for i < len(r) && !unicode.IsSpace(r[i]) && r[i] != '=' && r[i] != ';' && r[i] != '"' {
				i++
			}
			toks = append(toks, string(r[start:i]))
		}
	}
	return toks, nil
}

// PlainUsers are the user_<name>="<password>" options of a PlainLoginModule
// entry: the users PLAIN accepts.
func (j JAAS) PlainUsers() map[string]string {
	users := map[string]string{}
	for k, v := range j.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
			users[name] = v
		}
	}
	return users
}
