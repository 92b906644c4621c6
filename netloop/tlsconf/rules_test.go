package tlsconf

import "testing"

// ssl.principal.mapping.rules as Kafka documents them: first rule whose
// pattern matches the whole DN wins, $n groups, /L and /U, DEFAULT, and
// an error when none applies.
func TestRulesApply(t *testing.T) {
	for _, tc := range []struct {
		rules, dn, want string
		fails           bool
	}{
		{"", "CN=alice,OU=eng,O=acme", "CN=alice,OU=eng,O=acme", false},
		{"DEFAULT", "CN=alice,OU=eng", "CN=alice,OU=eng", false},
		{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=kafka-svc,OU=ServiceUsers,O=acme", "kafka-svc", false},
		{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=alice,OU=eng", "CN=alice,OU=eng", false},
		{"RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$2/L", "CN=Alice,OU=ENG,O=acme", "alice@eng", false},
		{"RULE:^CN=(.*?),OU=(.*?)$/$1/U", "CN=alice,OU=eng", "ALICE", false},
		{"RULE:^CN=(?P<who>[a-z]+),.*$/user-${who}/", "CN=bob,O=x", "user-bob", false},
		{`RULE:^CN=([^,]*),O=a\/b$/$1\/x/`, "CN=z,O=a/b", "z/x", false},
		{" RULE:^CN=x$/one/ , RULE:^CN=(.*)$/two-$1/ ", "CN=y", "two-y", false},
		{"RULE:^CN=x$/one/", "CN=y", "", true},
		{"RULE:^CN=(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)$/$10$1/", "CN=abcdefghij", "ja", false},
		{"RULE:^CN=(a)$/$12/", "CN=a", "a2", false}, // only group 1 exists: Java reads $1 then "2"
	} {
		r, err := ParseRules(tc.rules)
		if err != nil {
			t.Fatalf("ParseRules(%q): %v", tc.rules, err)
		}
		got, err := r.Apply(tc.dn)
		if (err != nil) != tc.fails || got != tc.want {
			t.Errorf("%q on %q = %q, %v; want %q (fails %v)", tc.rules, tc.dn, got, err, tc.want, tc.fails)
		}
	}
}

func TestRulesParseErrors(t *testing.T) {
	for _, s := range []string{
		"NOPE", "RULE:abc", "RULE:^(x$/y/", "RULE:x/$2/", "RULE:x/${nope}/", "RULE:x/y/Q", "DEFAULT DEFAULT", "RULE:x/y\\",
	} {
		if _, err := ParseRules(s); err == nil {
			t.Errorf("ParseRules(%q) accepted", s)
		}
	}
}
