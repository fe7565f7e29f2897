package gossip

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
)

// Probe wire protocol (TCP), version 1:
//
//	server → client: "CVBW" 0x01, 16-byte nonce
//	client → server: 8-byte size (big endian), 32-byte HMAC-SHA256(k, nonce‖size)
//	server → client: 1 status byte, then on statusOK exactly size bytes
//
// k = HMAC-SHA256(gossip key, "caravan-gossip-probe/v1"): a member of the
// cluster can probe, nobody else; the nonce stops replays.
const (
	probeMagic   = "CVBW\x01"
	nonceLen     = 16
	macLen       = sha256.Size
	statusOK     = 0
	statusBusy   = 1
	statusDenied = 2
	statusSize   = 3
)

// probeKeys derives one probe key per gossip key; without encryption
// (tests only) a fixed key is used.
func probeKeys(keys [][]byte) [][]byte {
	if len(keys) == 0 {
		keys = [][]byte{[]byte("caravan-insecure")}
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		h := hmac.New(sha256.New, k)
		h.Write([]byte("caravan-gossip-probe/v1"))
		out[i] = h.Sum(nil)
	}
	return out
}

func probeMAC(key, nonce []byte, size uint64) []byte {
	var sz [8]byte
	binary.BigEndian.PutUint64(sz[:], size)
	h := hmac.New(sha256.New, key)
	h.Write(nonce)
	h.Write(sz[:])
	return h.Sum(nil)
}

// validMAC accepts a MAC under any key of the keyring, so probes keep
// working while a key rotation is under way.
func validMAC(keys [][]byte, nonce []byte, size uint64, mac []byte) bool {
	ok := false
	for _, k := range keys {
		if hmac.Equal(probeMAC(k, nonce, size), mac) {
			ok = true
		}
	}
	return ok
}
