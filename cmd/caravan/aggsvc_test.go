package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/aggsvc/auth"
)

func TestAggsvcToken(t *testing.T) {
	t.Setenv(auth.KeyEnv, "cmd-test-key-0123456789")
	var out, errb bytes.Buffer
	if err := runAggsvc([]string{"token", "default/train"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != auth.JobToken([]byte("cmd-test-key-0123456789"), "default/train") {
		t.Fatalf("token %q", got)
	}
	out.Reset()
	if err := runAggsvc([]string{"token", "-admin"}, &out, &errb); err != nil || strings.TrimSpace(out.String()) != auth.AdminToken([]byte("cmd-test-key-0123456789")) {
		t.Fatalf("admin token %q %v", out.String(), err)
	}
}

func TestAggsvcFlagErrors(t *testing.T) {
	var out bytes.Buffer
	cases := []struct {
		key  string
		args []string
		want string
	}{
		{"", []string{"-listen", "127.0.0.1:0"}, "no signing key"},
		{"0123456789abcdef-key", []string{"-tls-cert", "x.pem"}, "-tls-cert and -tls-key"},
		{"0123456789abcdef-key", []string{"-key-file", "/dev/null"}, "need at least 16 bytes"},
		{"0123456789abcdef-key", []string{"x"}, `unexpected argument "x"`},
	}
	for _, c := range cases {
		t.Setenv(auth.KeyEnv, c.key)
		err := runAggsvc(c.args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
	if err := runAggsvc([]string{"-h"}, &out, &out); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "caravan aggsvc token") {
		t.Errorf("-h: %v\n%s", err, out.String())
	}
}
