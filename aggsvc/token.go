package aggsvc

import (
	"crypto/hmac"

	"github.com/caravan-dl/caravan/aggsvc/auth"
)

// JobToken is the credential of one job's workers (see package auth).
func JobToken(key []byte, job string) string { return auth.JobToken(key, job) }

// AdminToken authorises Register frames and /metrics.
func AdminToken(key []byte) string { return auth.AdminToken(key) }

// tokenOK compares in constant time.
func tokenOK(want string, got []byte) bool {
	return hmac.Equal([]byte(want), got)
}
