package gossip

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/memberlist"
)

// LoadKeyFile reads a keyring file: one base64 key per line (16, 24 or 32
// bytes, as `openssl rand -base64 32` makes), blank lines and # comments
// ignored. The first key is the primary; all keys decrypt. The file must
// not be readable by group or others.
func LoadKeyFile(path string) ([][]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("encryption_key_file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("encryption_key_file: %s has mode %v; make it readable by its owner only (chmod 600)", path, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption_key_file: %w", err)
	}
	return ParseKeys(raw)
}

// ParseKeys parses keyring file contents (see LoadKeyFile).
func ParseKeys(raw []byte) ([][]byte, error) {
	var keys [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		k, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("encryption_key_file: line %d: not base64: %v", line, err)
		}
		if err := memberlist.ValidateKey(k); err != nil {
			return nil, fmt.Errorf("encryption_key_file: line %d: %v", line, err)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("encryption_key_file: %w", err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("encryption_key_file: no key found")
	}
	return keys, nil
}
