package aggsvc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// JobToken is the credential of one job's workers: hex HMAC-SHA256 of the job
// name under the service key. Anyone holding the key (the service, the
// caravan driver) can mint it; nobody else can, and it opens only that job.
func JobToken(key []byte, job string) string {
	return mac(key, "caravan-aggsvc/job/v1\x00"+job)
}

// AdminToken authorises Register frames (jobs registered by an operator or a
// launcher rather than by their first worker).
func AdminToken(key []byte) string {
	return mac(key, "caravan-aggsvc/admin/v1")
}

func mac(key []byte, msg string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return hex.EncodeToString(h.Sum(nil))
}

// tokenOK compares in constant time.
func tokenOK(want string, got []byte) bool {
	return hmac.Equal([]byte(want), got)
}
