package config

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseProperties reads Java .properties text, the format of Kafka's
// server.properties: one key=value (or key:value, or "key value") per
// logical line, '#' and '!' comment lines, backslash line continuations and
// escapes (\t \n \r \f \\ \uXXXX). Values are trimmed, as Kafka trims them.
// A later duplicate key wins.
func ParseProperties(r io.Reader) (map[string]string, error) {
	out := make(map[string]string)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	lineNo := 0
	var logical strings.Builder
	startLine := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if logical.Len() == 0 {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			startLine = lineNo
		} else {
			line = strings.TrimLeft(line, " \t\f")
		}
		if continues(line) {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		k, v, err := splitProperty(logical.String())
		logical.Reset()
		if err != nil {
			return nil, fmt.Errorf("config: properties line %d: %w", startLine, err)
		}
		if k != "" {
			out[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("config: reading properties: %w", err)
	}
	if logical.Len() > 0 {
		k, v, err := splitProperty(logical.String())
		if err != nil {
			return nil, fmt.Errorf("config: properties line %d: %w", startLine, err)
		}
		if k != "" {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out, nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at the first unescaped '=', ':' or
// blank, and unescapes both halves.
func splitProperty(line string) (string, string, error) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i > len(line) {
		i = len(line)
	}
	key, rest := line[:i], line[i:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	k, err := unescape(key)
	if err != nil {
		return "", "", err
	}
	v, err := unescape(rest)
	if err != nil {
		return "", "", fmt.Errorf("key %q: %w", k, err)
	}
	return k, v, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("short \\u escape")
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape %q", s[i-1:i+5])
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// EnvPrefix starts every environment variable that sets a config.
const EnvPrefix = "SAMSA_"

// FromEnv maps SAMSA_* variables (as "NAME=value" strings, the shape of
// os.Environ) to config keys: the prefix is dropped, the rest lowercased,
// then "___" becomes "-", "__" becomes "_" and "_" becomes ".", so
// SAMSA_LOG_DIRS sets log.dirs. Names in skip (such as SAMSA_CONFIG,
// which names the file) are left out.
func FromEnv(environ []string, skip ...string) map[string]string {
	out := make(map[string]string)
next:
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || len(name) == len(EnvPrefix) {
			continue
		}
		for _, s := range skip {
			if name == s {
				continue next
			}
		}
		out[EnvKey(name)] = value
	}
	return out
}

// EnvKey is the config key an environment variable name sets.
func EnvKey(name string) string {
	k := strings.ToLower(strings.TrimPrefix(name, EnvPrefix))
	k = strings.ReplaceAll(k, "___", "\x00")
	k = strings.ReplaceAll(k, "__", "\x01")
	k = strings.ReplaceAll(k, "_", ".")
	k = strings.ReplaceAll(k, "\x00", "-")
	return strings.ReplaceAll(k, "\x01", "_")
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string {
	k := strings.ReplaceAll(key, "_", "__")
	k = strings.ReplaceAll(k, "-", "___")
	k = strings.ReplaceAll(k, ".", "_")
	return EnvPrefix + strings.ToUpper(k)
}
