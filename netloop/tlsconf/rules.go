package tlsconf

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Rules are ssl.principal.mapping.rules: they turn a certificate's
// subject DN into the name of its principal. Kafka's syntax: a comma list
// of DEFAULT (the DN unchanged) and RULE:pattern/replacement/ with an
// optional L or U after the last slash (lower or upper case the result).
// A rule applies when its pattern matches the whole DN; the result is the
// DN with every match of the pattern replaced, as Java's
// Matcher.replaceAll does ($1 and ${name} for groups, \ quotes the next
// character). The first rule that applies wins; when none does, the
// client is refused.
type Rules struct{ rules []rule }

type rule struct {
	dflt  bool
	text  string         // as configured, for messages
	re    *regexp.Regexp // the pattern
	whole *regexp.Regexp // the pattern anchored at both ends
	repl  []replPart
	lower bool
	upper bool
}

// replPart is a literal (group < 0) or a group reference: by number, or
// by name when name is set.
type replPart struct {
	lit   string
	group int
	name  string
}

// DefaultRules is Kafka's default, DEFAULT: the principal is the DN.
var DefaultRules = Rules{rules: []rule{{dflt: true, text: "DEFAULT"}}}

// ParseRules parses ssl.principal.mapping.rules; "" is DefaultRules.
func ParseRules(s string) (Rules, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultRules, nil
	}
	var out Rules
	rest := s
	for {
		rest = strings.TrimLeft(rest, " \t")
		var r rule
		var err error
		switch {
		case strings.HasPrefix(rest, "DEFAULT"):
			r, rest = rule{dflt: true, text: "DEFAULT"}, rest[len("DEFAULT"):]
		case strings.HasPrefix(rest, "RULE:"):
			r, rest, err = parseRule(rest)
			if err != nil {
				return Rules{}, err
			}
		default:
			return Rules{}, fmt.Errorf("invalid rule at %q: want DEFAULT or RULE:pattern/replacement/[LU]", rest)
		}
		out.rules = append(out.rules, r)
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			return out, nil
		}
		if rest[0] != ',' {
			return Rules{}, fmt.Errorf("invalid rule %q: unexpected %q after it", r.text, rest)
		}
		rest = rest[1:]
	}
}

// parseRule parses one RULE:pattern/replacement/[LU] at the start of s.
func parseRule(s string) (rule, string, error) {
	body := s[len("RULE:"):]
	pattern, n1, ok1 := upToSlash(body)
	repl, n2, ok2 := upToSlash(body[n1:])
	if !ok1 || !ok2 {
		return rule{}, "", fmt.Errorf("invalid rule %q: want RULE:pattern/replacement/[LU]", s)
	}
	rest := body[n1+n2:]
	r := rule{}
	if rest != "" && (rest[0] == 'L' || rest[0] == 'U') {
		r.lower, r.upper = rest[0] == 'L', rest[0] == 'U'
		rest = rest[1:]
	}
	r.text = s[:len(s)-len(rest)]
	var err error
	if r.re, err = regexp.Compile(pattern); err != nil {
		return rule{}, "", fmt.Errorf("invalid rule %q: pattern: %v", r.text, err)
	}
	r.whole = regexp.MustCompile(`^(?:` + pattern + `)$`)
	if r.repl, err = parseReplacement(repl, r.re); err != nil {
		return rule{}, "", fmt.Errorf("invalid rule %q: replacement: %v", r.text, err)
	}
	return r, rest, nil
}

// upToSlash returns s up to its first slash not quoted by a backslash,
// and how many bytes that took, the slash included.
func upToSlash(s string) (string, int, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '/':
			return s[:i], i + 1, true
		}
	}
	return "", 0, false
}

// parseReplacement reads a Java replacement string: $n takes as many
// digits as still name a group of re, ${name} a named group, and a
// backslash quotes the next character.
func parseReplacement(s string, re *regexp.Regexp) ([]replPart, error) {
	var parts []replPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, replPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) {
				return nil, errors.New("ends in a backslash")
			}
			i++
			lit.WriteByte(s[i])
		case '$':
			flush()
			if i+1 < len(s) && s[i+1] == '{' {
				end := strings.IndexByte(s[i:], '}')
				if end < 0 {
					return nil, errors.New("unclosed ${")
				}
				name := s[i+2 : i+end]
				if re.SubexpIndex(name) < 0 {
					return nil, fmt.Errorf("no group named %q", name)
				}
				parts = append(parts, replPart{name: name, group: re.SubexpIndex(name)})
				i += end
				continue
			}
			if i+1 == len(s) || s[i+1] < '0' || s[i+1] > '9' {
				return nil, errors.New("$ not followed by a group number or {name}")
			}
			g := int(s[i+1] - '0')
			if g > re.NumSubexp() {
				return nil, fmt.Errorf("no group %d", g)
			}
			i++
			for i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' && g*10+int(s[i+1]-'0') <= re.NumSubexp() {
				g = g*10 + int(s[i+1]-'0')
				i++
			}
			parts = append(parts, replPart{group: g})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return parts, nil
}

// Apply maps a DN to a principal name with the first rule that applies.
func (rs Rules) Apply(dn string) (string, error) {
	for _, r := range rs.rules {
		if r.dflt {
			return dn, nil
		}
		if !r.whole.MatchString(dn) {
			continue
		}
		out := r.replaceAll(dn)
		switch {
		case r.lower:
			out = strings.ToLower(out)
		case r.upper:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("no rule of ssl.principal.mapping.rules applies to %q", dn)
}

func (r *rule) replaceAll(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		for _, p := range r.repl {
			if p.group < 0 {
				b.WriteString(p.lit)
			} else if m[2*p.group] >= 0 {
				b.WriteString(s[m[2*p.group]:m[2*p.group+1]])
			}
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// String is the rules as configured.
func (rs Rules) String() string {
	texts := make([]string, len(rs.rules))
	for i, r := range rs.rules {
		texts[i] = r.text
	}
	return strings.Join(texts, ",")
}
