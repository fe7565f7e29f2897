package auth

import "testing"

func TestTokensDifferByJobAndKey(t *testing.T) {
	k := []byte("0123456789abcdef")
	a, b := JobToken(k, "default/a"), JobToken(k, "default/b")
	if a == b || len(a) != 64 || a != JobToken(k, "default/a") {
		t.Fatalf("tokens: %s %s", a, b)
	}
	if JobToken([]byte("another-key-0123"), "default/a") == a || AdminToken(k) == a {
		t.Fatal("token must depend on the key and the purpose")
	}
}
