package live

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/caravan-dl/caravan/internal/gzip64"
)

// The state Variable's items. Nomad limits a Variable's items to 64 KiB in
// all, so the state is gzipped JSON in base64 (items are strings), inline
// in itemData when it fits in chunkSize, else split over part Variables.
const (
	itemEncoding = "encoding"
	itemGen      = "generation"
	itemParts    = "parts"
	itemSum      = "sha256"       // of the whole encoded payload
	itemPartSums = "parts_sha256" // each part's, space-separated
	itemData     = "data"

	encodingGzip = "gzip+base64"

	// chunkSize is the most encoded bytes one Variable carries: under
	// Nomad's 64 KiB with room for the header items.
	chunkSize = 48 << 10
	// maxStateJSON bounds what a payload may inflate to, so a corrupt or
	// hostile Variable cannot exhaust memory (10,000 jobs are ~3 MiB).
	maxStateJSON = 1 << 30
)

// generation names one save's parts: Seq is one more than the loaded
// state's, so parts older than the current state can be told apart; Nonce
// is random, so two writers racing from the same state never write the
// same part path.
type generation struct {
	Seq   uint64
	Nonce string
}

func (g generation) String() string { return fmt.Sprintf("%d_%s", g.Seq, g.Nonce) }

func parseGeneration(s string) (generation, error) {
	seq, nonce, ok := strings.Cut(s, "_")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil || nonce == "" || strings.ContainsAny(nonce, "-_/") {
		return generation{}, fmt.Errorf("generation %q: want <seq>_<nonce>", s)
	}
	return generation{Seq: n, Nonce: nonce}, nil
}

func nextGeneration(prev generation) (generation, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return generation{}, err
	}
	return generation{Seq: prev.Seq + 1, Nonce: hex.EncodeToString(b[:])}, nil
}

// header is what the main Variable says about the payload.
type header struct {
	Gen      generation
	Parts    int
	Sum      string
	PartSums []string
}

func (h header) items() map[string]string {
	return map[string]string{
		itemEncoding: encodingGzip, itemGen: h.Gen.String(),
		itemParts: strconv.Itoa(h.Parts), itemSum: h.Sum,
		itemPartSums: strings.Join(h.PartSums, " "),
	}
}

// parseHeader reads the main Variable's items written by save.
func parseHeader(items map[string]string) (header, error) {
	var h header
	if enc := items[itemEncoding]; enc != encodingGzip {
		return h, fmt.Errorf("unknown encoding %q (want %q)", enc, encodingGzip)
	}
	g, err := parseGeneration(items[itemGen])
	if err != nil {
		return h, err
	}
	n, err := strconv.Atoi(items[itemParts])
	if err != nil || n < 0 || n > maxStateJSON/chunkSize {
		return h, fmt.Errorf("item %s %q is not a part count", itemParts, items[itemParts])
	}
	h = header{Gen: g, Parts: n, Sum: items[itemSum], PartSums: strings.Fields(items[itemPartSums])}
	if len(h.Sum) != sha256.Size*2 {
		return h, fmt.Errorf("item %s %q is not a sha256", itemSum, h.Sum)
	}
	if len(h.PartSums) != n {
		return h, fmt.Errorf("item %s lists %d sums for %d parts", itemPartSums, len(h.PartSums), n)
	}
	return h, nil
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// encodeState renders st as gzipped JSON in base64.
func encodeState(st *state) (string, error) {
	js, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return gzip64.Encode(js)
}

// decodeState is encodeState's inverse; garbage is an error, never a panic.
func decodeState(payload string) (*state, error) {
	js, err := gzip64.Decode(payload, maxStateJSON)
	if err != nil {
		return nil, err
	}
	return decodeJSON(js)
}

// decodeJSON reads the state's JSON (also the previous version's format).
func decodeJSON(js []byte) (*state, error) {
	st := newState()
	if err := json.Unmarshal(js, st); err != nil {
		return nil, fmt.Errorf("payload is not the state's JSON: %w", err)
	}
	if st.Jobs == nil {
		st.Jobs = map[string]*record{}
	}
	for id, r := range st.Jobs {
		if r == nil {
			return nil, fmt.Errorf("job %q has a null record", id)
		}
	}
	return st, nil
}

// split cuts payload into chunkSize pieces (base64 is ASCII, so any byte
// offset is a safe cut).
func split(payload string) []string {
	var out []string
	for len(payload) > chunkSize {
		out = append(out, payload[:chunkSize])
		payload = payload[chunkSize:]
	}
	return append(out, payload)
}

var errNotState = errors.New("neither the current format (item \"encoding\") nor the previous one (item \"state\")")
