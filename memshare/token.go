package memshare

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MinKeyLen is the shortest accepted shared secret.
const MinKeyLen = 16

const (
	tokenPrefix   = "ms1"
	sessionPrefix = "ms1s"
)

// Token is the signed claim a consumer presents as the NBD export name:
// which lease, until when. A session token (Session set) names instead a
// consumer's session ID (SessionID): one connection that reaches every
// slab the consumer leases on the donor.
type Token struct {
	LeaseID string
	Expires time.Time
	Session bool
}

// SessionID is the hex ID a session token carries for consumer.
func SessionID(consumer string) string {
	sum := sha256.Sum256([]byte("memshare-session:" + consumer))
	return hex.EncodeToString(sum[:16])
}

// Signer signs and verifies lease tokens with a shared HMAC key.
type Signer struct{ key []byte }

// NewSigner checks the key length.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("memshare key: %d bytes, need at least %d", len(key), MinKeyLen)
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// Sign returns "ms1.<lease>.<unix expiry>.<signature>" ("ms1s." for a
// session).
func (s *Signer) Sign(t Token) string {
	prefix := tokenPrefix
	if t.Session {
		prefix = sessionPrefix
	}
	body := fmt.Sprintf("%s.%s.%d", prefix, t.LeaseID, t.Expires.Unix())
	return body + "." + s.mac(body)
}

func (s *Signer) mac(body string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Errors from Verify.
var (
	ErrTokenMalformed = errors.New("lease token is malformed")
	ErrTokenForged    = errors.New("lease token signature is invalid")
	ErrTokenExpired   = errors.New("lease token has expired")
)

// Verify checks the signature, then the expiry against now.
func (s *Signer) Verify(tok string, now time.Time) (Token, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 4 || (parts[0] != tokenPrefix && parts[0] != sessionPrefix) || !validLeaseID(parts[1]) {
		return Token{}, ErrTokenMalformed
	}
	body := strings.Join(parts[:3], ".")
	if !hmac.Equal([]byte(s.mac(body)), []byte(parts[3])) {
		return Token{}, ErrTokenForged
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return Token{}, ErrTokenMalformed
	}
	t := Token{LeaseID: parts[1], Expires: time.Unix(exp, 0), Session: parts[0] == sessionPrefix}
	if !now.Before(t.Expires) {
		return t, ErrTokenExpired
	}
	return t, nil
}

// validLeaseID accepts the hex IDs donors issue.
func validLeaseID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}
