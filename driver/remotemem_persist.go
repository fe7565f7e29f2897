package driver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caravan-dl/caravan/memshare/consumer"
	"github.com/hashicorp/go-hclog"
)

// A consumer task's volume layout (which leased slab of which donor holds
// each slot of each stripe, with its lease) lives in the plugin process;
// it is saved to <state_dir>/memshare/<task id>.layout so a restarted
// plugin can re-open the volume (RecoverTask). The file is the plugin's
// own (mode 0600 in a 0700 dir, outside every task's reach) and carries
// an HMAC under the memshare key, so a file edited or written by anyone
// without the key is refused rather than trusted.

const (
	layoutFileVersion = 1
	layoutMACDomain   = "caravan-memshare-layout-v1"
	maxLayoutFile     = 16 << 20
	layoutSaveEvery   = 2 * time.Second
)

// layoutFile is the file's JSON.
type layoutFile struct {
	Version int             `json:"version"`
	Task    string          `json:"task"`
	Layout  json.RawMessage `json:"layout"`
	MAC     string          `json:"mac"`
}

func layoutPath(stateDir, taskID string) string {
	return filepath.Join(stateDir, "memshare", taskID+".layout")
}

func layoutMAC(key []byte, task string, layout []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(layoutMACDomain + "\x00" + task + "\x00"))
	m.Write(layout)
	return hex.EncodeToString(m.Sum(nil))
}

// writeLayout saves l atomically (temp file, fsync, rename, fsync dir).
func writeLayout(path string, key []byte, task string, l consumer.Layout) ([]byte, error) {
	body, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(layoutFile{Version: layoutFileVersion, Task: task, Layout: body, MAC: layoutMAC(key, task, body)})
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".layout-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(out)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return nil, err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return body, nil
}

// readLayout loads and authenticates a saved layout.
func readLayout(path string, key []byte, task string) (consumer.Layout, error) {
	var l consumer.Layout
	f, err := os.Open(path)
	if err != nil {
		return l, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxLayoutFile+1))
	if err != nil {
		return l, err
	}
	if len(raw) > maxLayoutFile {
		return l, fmt.Errorf("%s: larger than %d bytes", path, maxLayoutFile)
	}
	return parseLayout(raw, key, task)
}

// parseLayout checks the file's version, task and MAC, then decodes it.
func parseLayout(raw, key []byte, task string) (consumer.Layout, error) {
	var l consumer.Layout
	var f layoutFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return l, fmt.Errorf("layout file: %w", err)
	}
	if f.Version != layoutFileVersion {
		return l, fmt.Errorf("layout file: version %d, this build reads %d", f.Version, layoutFileVersion)
	}
	if f.Task != task {
		return l, fmt.Errorf("layout file: task %q, want %q", f.Task, task)
	}
	if !hmac.Equal([]byte(f.MAC), []byte(layoutMAC(key, task, f.Layout))) {
		return l, errors.New("layout file: mac: not signed by this memshare key (edited, or the key changed)")
	}
	if err := json.Unmarshal(f.Layout, &l); err != nil {
		return l, fmt.Errorf("layout file: layout: %w", err)
	}
	return l, nil
}

// layoutSaver keeps a volume's layout file current.
type layoutSaver struct {
	vol    *consumer.Volume
	path   string
	key    []byte
	task   string
	logger hclog.Logger

	mu     sync.Mutex
	last   atomic.Pointer[consumer.Snapshot] // what the file holds
	body   []byte                            // its layout JSON
	failed bool
	done   bool // finished: save no more
}

// finish stops saving; remove also deletes the file (the task ended).
func (s *layoutSaver) finish(remove bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if remove {
		_ = os.Remove(s.path)
	}
}

// sync saves the layout if a slab of a stripe in [off, off+n) failed or
// was replaced since the last save. Write paths call it before they
// acknowledge.
func (s *layoutSaver) sync(off, n uint64) {
	if s.vol.Changed(s.last.Load(), off, n) {
		s.save()
	}
}

// save writes the current layout when it differs from the file's. When
// it cannot, the file is removed: a restarted plugin then refuses to
// re-open the volume rather than trust a layout that may be stale.
func (s *layoutSaver) save() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	snap := s.vol.Snapshot()
	body, err := json.Marshal(snap.Layout)
	if err == nil && bytes.Equal(body, s.body) {
		s.last.Store(snap)
		return
	}
	if err == nil {
		body, err = writeLayout(s.path, s.key, s.task, snap.Layout)
	}
	if err != nil {
		if !s.failed {
			s.logger.Error("cannot save the remote memory layout; it will not survive a plugin restart", "path", s.path, "error", err)
		}
		s.failed = true
		_ = os.Remove(s.path)
		s.body = nil
		s.last.Store(snap)
		return
	}
	s.failed = false
	s.body = body
	s.last.Store(snap)
}

// loop saves lease renewals and re-homed slabs every few seconds until
// stop is closed.
func (s *layoutSaver) loop(stop <-chan struct{}) {
	t := time.NewTicker(layoutSaveEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.save()
		}
	}
}
