package aggsvc

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// DType is the element type of a pushed partition.
type DType uint8

// Element types. Half-precision partitions are accumulated in float32 and
// rounded back once, so their sums are as exact as float32 ones.
const (
	Float32  DType = 1
	Float16  DType = 2
	BFloat16 DType = 3
)

// Size is the element size in bytes; 0 for an unknown type.
func (t DType) Size() int {
	switch t {
	case Float32:
		return 4
	case Float16, BFloat16:
		return 2
	}
	return 0
}

func (t DType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case BFloat16:
		return "bfloat16"
	}
	return fmt.Sprintf("dtype(%d)", uint8(t))
}

// Op is the reduction applied across workers.
type Op uint8

// Reductions.
const (
	OpSum  Op = 0
	OpMean Op = 1
)

// Error codes carried by error frames.
const (
	CodeBadRequest   uint16 = 1
	CodeUnauthorized uint16 = 2
	CodeTimeout      uint16 = 3
	CodeWorkerLost   uint16 = 4
	CodeOverLimit    uint16 = 5
	CodeJobGone      uint16 = 6
	CodeConflict     uint16 = 7
)

const (
	maxJobName  = 256
	maxTokenLen = 128
	maxErrorMsg = 1024
)

type helloMsg struct {
	Job     string
	Token   []byte
	Rank    uint32
	Workers uint32
	Weight  uint32
}

func (m helloMsg) encode() []byte {
	var e encoder
	e.bytes([]byte(m.Job))
	e.bytes(m.Token)
	e.u32(m.Rank)
	e.u32(m.Workers)
	e.u32(m.Weight)
	return e.b
}

func decodeHello(b []byte) (helloMsg, error) {
	d := decoder{b: b}
	m := helloMsg{Job: string(d.bytes("job", maxJobName))}
	m.Token = d.bytes("token", maxTokenLen)
	m.Rank = d.u32("rank")
	m.Workers = d.u32("workers")
	m.Weight = d.u32("weight")
	if err := d.done(); err != nil {
		return m, fmt.Errorf("hello: %w", err)
	}
	return m, m.validate()
}

func (m helloMsg) validate() error {
	if err := validJob(m.Job); err != nil {
		return err
	}
	if m.Workers == 0 || m.Workers > maxWorkers {
		return fmt.Errorf("hello: field workers: %d, want 1..%d", m.Workers, maxWorkers)
	}
	if m.Rank >= m.Workers {
		return fmt.Errorf("hello: field rank: %d, want < workers (%d)", m.Rank, m.Workers)
	}
	if m.Weight > maxWeight {
		return fmt.Errorf("hello: field weight: %d, want 0..%d (0 means 1)", m.Weight, maxWeight)
	}
	return nil
}

const (
	maxWorkers = 4096
	maxWeight  = 1000
)

func validJob(job string) error {
	if job == "" || !utf8.ValidString(job) {
		return errors.New("field job: must be non-empty UTF-8")
	}
	return nil
}

type registerMsg struct {
	AdminToken []byte
	Job        string
	Workers    uint32
	Weight     uint32
}

func (m registerMsg) encode() []byte {
	var e encoder
	e.bytes(m.AdminToken)
	e.bytes([]byte(m.Job))
	e.u32(m.Workers)
	e.u32(m.Weight)
	return e.b
}

func decodeRegister(b []byte) (registerMsg, error) {
	d := decoder{b: b}
	m := registerMsg{AdminToken: d.bytes("admin_token", maxTokenLen)}
	m.Job = string(d.bytes("job", maxJobName))
	m.Workers = d.u32("workers")
	m.Weight = d.u32("weight")
	if err := d.done(); err != nil {
		return m, fmt.Errorf("register: %w", err)
	}
	h := helloMsg{Job: m.Job, Workers: m.Workers, Weight: m.Weight}
	return m, h.validate()
}

// pushHeaderSize is the fixed part of a push or result body before data.
// Two reserved zero bytes keep the data 4-byte aligned within the body.
const pushHeaderSize = 8 + 4 + 1 + 1 + 2 + 4

type pushMsg struct {
	Step      uint64
	Partition uint32
	DType     DType
	Op        Op
	Data      []byte // Count elements, little endian
}

func (m pushMsg) header() []byte {
	var e encoder
	e.b = make([]byte, 0, pushHeaderSize)
	e.u64(m.Step)
	e.u32(m.Partition)
	e.u8(uint8(m.DType))
	e.u8(uint8(m.Op))
	e.u16(0)
	e.u32(uint32(len(m.Data) / max(m.DType.Size(), 1)))
	return e.b
}

func decodePush(b []byte) (pushMsg, error) {
	d := decoder{b: b}
	m := pushMsg{Step: d.u64("step"), Partition: d.u32("partition")}
	m.DType = DType(d.u8("dtype"))
	m.Op = Op(d.u8("op"))
	reserved := d.u16("reserved")
	count := d.u32("count")
	if d.err != nil {
		return m, fmt.Errorf("push: %w", d.err)
	}
	if reserved != 0 {
		return m, fmt.Errorf("push: field reserved: must be 0, got %d", reserved)
	}
	size := m.DType.Size()
	if size == 0 {
		return m, fmt.Errorf("push: field dtype: unknown type %d", m.DType)
	}
	if m.Op != OpSum && m.Op != OpMean {
		return m, fmt.Errorf("push: field op: unknown reduction %d", m.Op)
	}
	if count == 0 || uint64(count)*uint64(size) != uint64(len(d.b)) {
		return m, fmt.Errorf("push: field count: %d %s elements need %d bytes, frame has %d",
			count, m.DType, uint64(count)*uint64(size), len(d.b))
	}
	m.Data = d.b
	return m, nil
}

// resultMsg shares the push layout; Op is unused.
func decodeResult(b []byte) (pushMsg, error) {
	m, err := decodePush(b)
	if err != nil {
		return m, fmt.Errorf("result: %w", err)
	}
	return m, nil
}

type errorMsg struct {
	Code      uint16
	Step      uint64
	Partition uint32
	Message   string
}

func (m errorMsg) encode() []byte {
	var e encoder
	e.u16(m.Code)
	e.u64(m.Step)
	e.u32(m.Partition)
	msg := m.Message
	if len(msg) > maxErrorMsg {
		msg = msg[:maxErrorMsg]
	}
	e.bytes([]byte(msg))
	return e.b
}

func decodeError(b []byte) (errorMsg, error) {
	d := decoder{b: b}
	m := errorMsg{Code: d.u16("code"), Step: d.u64("step"), Partition: d.u32("partition")}
	m.Message = string(d.bytes("message", maxErrorMsg))
	return m, d.done()
}

// ServerError is an error frame the server sent.
type ServerError struct {
	Code      uint16
	Step      uint64
	Partition uint32
	Message   string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("aggsvc: %s (code %d)", e.Message, e.Code)
}
