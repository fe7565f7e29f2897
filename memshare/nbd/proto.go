// Package nbd implements the Network Block Device protocol (fixed newstyle
// handshake, simple and structured replies, optional TLS) as used by
// memshare: a server that exports byte ranges behind the Export interface,
// and a pipelined client. The wire format follows the protocol document of
// NetworkBlockDevice/nbd (doc/proto.md).
package nbd

// Handshake magics and flags.
const (
	nbdMagic        uint64 = 0x4e42444d41474943 // "NBDMAGIC"
	optMagic        uint64 = 0x49484156454F5054 // "IHAVEOPT"
	optReplyMagic   uint64 = 0x3e889045565a9
	flagFixedNew    uint16 = 1 << 0
	flagNoZeroes    uint16 = 1 << 1
	cflagFixedNew   uint32 = 1 << 0
	cflagNoZeroes   uint32 = 1 << 1
	requestMagic    uint32 = 0x25609513
	simpleMagic     uint32 = 0x67446698
	structuredMagic uint32 = 0x668e33ef
)

// Options.
const (
	optExportName      uint32 = 1
	optAbort           uint32 = 2
	optList            uint32 = 3
	optStartTLS        uint32 = 5
	optInfo            uint32 = 6
	optGo              uint32 = 7
	optStructuredReply uint32 = 8
)

// Option reply types.
const (
	repAck         uint32 = 1
	repServer      uint32 = 2
	repInfo        uint32 = 3
	repErrUnsup    uint32 = 1<<31 + 1
	repErrPolicy   uint32 = 1<<31 + 2
	repErrInvalid  uint32 = 1<<31 + 3
	repErrTLSReqd  uint32 = 1<<31 + 5
	repErrUnknown  uint32 = 1<<31 + 6
	repErrShutdown uint32 = 1<<31 + 7
	repErrTooBig   uint32 = 1<<31 + 9
)

// Info types for NBD_OPT_INFO / NBD_OPT_GO.
const (
	infoExport      uint16 = 0
	infoName        uint16 = 1
	infoDescription uint16 = 2
	infoBlockSize   uint16 = 3
)

// Transmission flags.
const (
	tflagHasFlags   uint16 = 1 << 0
	tflagReadOnly   uint16 = 1 << 1
	tflagSendFlush  uint16 = 1 << 2
	tflagSendFUA    uint16 = 1 << 3
	tflagSendTrim   uint16 = 1 << 5
	tflagMultiConn  uint16 = 1 << 8
	serverTFlags           = tflagHasFlags | tflagSendFlush | tflagSendFUA | tflagSendTrim | tflagMultiConn
	cmdFlagFUA      uint16 = 1 << 0
	cmdFlagNoHole   uint16 = 1 << 1
	cmdFlagDF       uint16 = 1 << 2
	knownCmdFlags          = cmdFlagFUA | cmdFlagNoHole | cmdFlagDF
	replyFlagDone   uint16 = 1 << 0
	replyOffsetData uint16 = 1
	replyError      uint16 = 1<<15 + 1
)

// Commands.
const (
	cmdRead  uint16 = 0
	cmdWrite uint16 = 1
	cmdDisc  uint16 = 2
	cmdFlush uint16 = 3
	cmdTrim  uint16 = 4
)

// Errno values carried in replies (the protocol's, not the host's).
const (
	EPERM     uint32 = 1
	EIO       uint32 = 5
	ENOMEM    uint32 = 12
	EINVAL    uint32 = 22
	ENOSPC    uint32 = 28
	EOVERFLOW uint32 = 75
	ENOTSUP   uint32 = 95
	ESHUTDOWN uint32 = 108
)

// Limits. MaxPayload is the protocol's safe maximum (2^25): larger reads or
// writes are refused. Option data beyond maxOptionLen ends the connection.
const (
	MaxPayload   = 32 << 20
	maxOptionLen = 64 << 10
	maxNameLen   = 4096
	requestLen   = 28
)
