package oci

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseChallenge(t *testing.T) {
	cases := []struct {
		header, scheme string
		params         map[string]string
	}{
		{`Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull"`, "bearer",
			map[string]string{"realm": "https://auth.example.com/token", "service": "registry.example.com", "scope": "repository:a/b:pull"}},
		{`Basic realm="hoist-e2e"`, "basic", map[string]string{"realm": "hoist-e2e"}},
		{`bearer Realm=https://a/t, service=x`, "bearer", map[string]string{"realm": "https://a/t", "service": "x"}},
		{`Bearer realm="a \"quoted\" realm",error="insufficient_scope"`, "bearer", map[string]string{"realm": `a "quoted" realm`, "error": "insufficient_scope"}},
		{``, "", map[string]string{}},
	}
	for _, tc := range cases {
		scheme, params := parseChallenge(tc.header)
		if scheme != tc.scheme || len(params) != len(tc.params) {
			t.Errorf("%q: %q %v, want %q %v", tc.header, scheme, params, tc.scheme, tc.params)
			continue
		}
		for k, v := range tc.params {
			if params[k] != v {
				t.Errorf("%q: %s=%q, want %q", tc.header, k, params[k], v)
			}
		}
	}
}

// TestCheckRealm: the user's credentials go to an HTTPS realm, to plain
// HTTP only from a plain registry, and never to an address of this machine
// or its link other than the registry's own host.
func TestCheckRealm(t *testing.T) {
	https, _ := url.Parse("https://registry.example.com:5000/v2/")
	plain, _ := url.Parse("http://127.0.0.1:5000/v2/")
	local, _ := url.Parse("https://127.0.0.1:5000/v2/")
	cases := []struct {
		realm string
		reg   *url.URL
		ok    string // "" when refused, else what it must say
	}{
		{"https://auth.example.com/token", https, "ok"},
		{"http://auth.example.com/token", https, ""},
		{"http://127.0.0.1:5001/token", plain, "ok"},
		{"https://127.0.0.1:5001/token", local, "ok"},
		{"https://127.0.0.1:5001/token", https, ""},
		{"https://169.254.169.254/latest/meta-data", https, ""},
		{"https://[::1]/token", https, ""},
		{"https://[::ffff:127.0.0.1]/token", https, ""},
		{"https://0.0.0.0/token", https, ""},
		{"ftp://auth.example.com/token", https, ""},
		{"", https, ""},
	}
	for _, tc := range cases {
		_, err := checkRealm(tc.realm, tc.reg)
		if (err == nil) != (tc.ok != "") {
			t.Errorf("realm %q from %s: %v", tc.realm, tc.reg, err)
		}
		if err != nil && !strings.Contains(err.Error(), "realm") {
			t.Errorf("realm %q: %v does not name the realm", tc.realm, err)
		}
	}
}
