// Package auth mints aggsvc's credentials: a job token is the hex
// HMAC-SHA256 of the job name under the service key, so anyone holding the
// key (the service, the caravan driver) can mint it, and it opens only that
// job. It has no dependencies so the driver can import it cheaply.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// KeyEnv is the environment variable holding the signing key.
const KeyEnv = "CARAVAN_AGGSVC_KEY"

// JobToken is the credential of one job's workers.
func JobToken(key []byte, job string) string {
	return mac(key, "caravan-aggsvc/job/v1\x00"+job)
}

// AdminToken authorises Register frames and the /metrics endpoint.
func AdminToken(key []byte) string {
	return mac(key, "caravan-aggsvc/admin/v1")
}

func mac(key []byte, msg string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return hex.EncodeToString(h.Sum(nil))
}
