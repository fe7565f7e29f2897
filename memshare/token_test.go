package memshare

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTokenRoundTripAndRefusals(t *testing.T) {
	s, err := NewSigner([]byte("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok := s.Sign(Token{LeaseID: "abc123", Expires: now.Add(time.Minute)})
	got, err := s.Verify(tok, now)
	if err != nil || got.LeaseID != "abc123" {
		t.Fatalf("valid token: %+v %v", got, err)
	}
	if _, err := s.Verify(tok, now.Add(2*time.Minute)); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("expired: %v", err)
	}
	forged := strings.Replace(tok, "abc123", "abc124", 1)
	if _, err := s.Verify(forged, now); !errors.Is(err, ErrTokenForged) {
		t.Fatalf("edited lease id: %v", err)
	}
	for _, bad := range []string{"", "ms1", "ms1.x.y.z", "ms2.abc.1.sig", "ms1.ABC.1.sig", "ms1.abc.notanumber." + s.mac("ms1.abc.notanumber")} {
		if _, err := s.Verify(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	sess := s.Sign(Token{LeaseID: SessionID("consumer-a"), Expires: now.Add(time.Minute), Session: true})
	if got, err := s.Verify(sess, now); err != nil || !got.Session || got.LeaseID != SessionID("consumer-a") {
		t.Fatalf("session token: %+v %v", got, err)
	}
	// The prefix is signed: a session token is no lease token, nor back.
	if _, err := s.Verify(strings.Replace(sess, "ms1s.", "ms1.", 1), now); !errors.Is(err, ErrTokenForged) {
		t.Fatalf("session token passed as a lease token: %v", err)
	}
	if _, err := s.Verify(strings.Replace(tok, "ms1.", "ms1s.", 1), now); !errors.Is(err, ErrTokenForged) {
		t.Fatalf("lease token passed as a session token: %v", err)
	}
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Fatal("short key accepted")
	}
}

// FuzzVerify: export names come from the network; Verify never panics and
// accepts only what the key signed.
func FuzzVerify(f *testing.F) {
	s, _ := NewSigner([]byte("fuzz-key-0123456789"))
	exp := time.Unix(1<<40, 0)
	f.Add(s.Sign(Token{LeaseID: "deadbeef", Expires: exp}))
	f.Add("ms1.deadbeef.1099511627776.AAAA")
	f.Add("ms1..0.")
	f.Add(s.Sign(Token{LeaseID: SessionID("c"), Expires: exp, Session: true}))
	f.Add(strings.Repeat(".", 5000))
	f.Fuzz(func(t *testing.T, tok string) {
		got, err := s.Verify(tok, time.Unix(0, 0))
		if err == nil && s.Sign(got) != tok {
			t.Fatalf("accepted %q, which the key did not sign", tok)
		}
	})
}
