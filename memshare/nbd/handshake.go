package nbd

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// errAbort ends a handshake the client aborted on purpose.
var errAbort = errors.New("client aborted the handshake")

// session is one client connection.
type session struct {
	srv        *Server
	conn       net.Conn
	tlsOn      bool
	noZeroes   bool
	structured bool
	export     Export
	name       string
}

// handshake runs the fixed newstyle negotiation until the client picks an
// export (NBD_OPT_GO or NBD_OPT_EXPORT_NAME) or the connection must end.
func (s *session) handshake() error {
	cfg := &s.srv.cfg
	_ = s.conn.SetDeadline(time.Now().Add(cfg.HandshakeTimeout))
	var hello [18]byte
	binary.BigEndian.PutUint64(hello[0:], nbdMagic)
	binary.BigEndian.PutUint64(hello[8:], optMagic)
	binary.BigEndian.PutUint16(hello[16:], flagFixedNew|flagNoZeroes)
	if _, err := s.conn.Write(hello[:]); err != nil {
		return err
	}
	var cf [4]byte
	if _, err := io.ReadFull(s.conn, cf[:]); err != nil {
		return err
	}
	flags := binary.BigEndian.Uint32(cf[:])
	if flags&^(cflagFixedNew|cflagNoZeroes) != 0 {
		return fmt.Errorf("client flags %#x include unknown bits", flags)
	}
	s.noZeroes = flags&cflagNoZeroes != 0
	for {
		opt, data, err := s.readOption()
		if err != nil {
			return err
		}
		done, err := s.option(opt, data)
		if err != nil || done {
			return err
		}
	}
}

// readOption reads one option request; bad magic or oversized data ends the
// connection (there is no way to resynchronise).
func (s *session) readOption() (uint32, []byte, error) {
	var h [16]byte
	if _, err := io.ReadFull(s.conn, h[:]); err != nil {
		return 0, nil, err
	}
	if m := binary.BigEndian.Uint64(h[0:]); m != optMagic {
		return 0, nil, fmt.Errorf("option magic %#x is not IHAVEOPT", m)
	}
	opt, n := binary.BigEndian.Uint32(h[8:]), binary.BigEndian.Uint32(h[12:])
	if n > maxOptionLen {
		return 0, nil, fmt.Errorf("option %d data of %d bytes exceeds %d", opt, n, maxOptionLen)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(s.conn, data); err != nil {
		return 0, nil, err
	}
	return opt, data, nil
}

// option answers one option; done means transmission starts.
func (s *session) option(opt uint32, data []byte) (bool, error) {
	cfg := &s.srv.cfg
	if cfg.RequireTLS && !s.tlsOn && opt != optStartTLS && opt != optAbort {
		if opt == optExportName {
			return false, errors.New("NBD_OPT_EXPORT_NAME before TLS: refused by closing")
		}
		return false, s.replyErr(opt, repErrTLSReqd, "TLS is required: send NBD_OPT_STARTTLS first")
	}
	switch opt {
	case optExportName:
		return true, s.exportName(data)
	case optAbort:
		_ = s.reply(opt, repAck, nil)
		return false, errAbort
	case optList:
		return false, s.list(data)
	case optStartTLS:
		return false, s.startTLS(data)
	case optStructuredReply:
		if len(data) != 0 {
			return false, s.replyErr(opt, repErrInvalid, "NBD_OPT_STRUCTURED_REPLY takes no data")
		}
		s.structured = true
		return false, s.reply(opt, repAck, nil)
	case optInfo, optGo:
		return s.infoGo(opt, data)
	default:
		return false, s.replyErr(opt, repErrUnsup, fmt.Sprintf("option %d is not supported", opt))
	}
}

func (s *session) exportName(data []byte) error {
	if len(data) > maxNameLen {
		return fmt.Errorf("export name of %d bytes is too long", len(data))
	}
	exp, err := s.srv.cfg.Exports.Lookup(string(data))
	if err != nil {
		return fmt.Errorf("export refused: %w", err)
	}
	buf := make([]byte, 10, 134)
	binary.BigEndian.PutUint64(buf[0:], exp.Size())
	binary.BigEndian.PutUint16(buf[8:], serverTFlags)
	if !s.noZeroes {
		buf = buf[:134]
	}
	s.export, s.name = exp, string(data)
	_, err = s.conn.Write(buf)
	return err
}

func (s *session) list(data []byte) error {
	if len(data) != 0 {
		return s.replyErr(optList, repErrInvalid, "NBD_OPT_LIST takes no data")
	}
	for _, name := range s.srv.cfg.Exports.List() {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
		if err := s.reply(optList, repServer, append(b, name...)); err != nil {
			return err
		}
	}
	return s.reply(optList, repAck, nil)
}

func (s *session) startTLS(data []byte) error {
	cfg := &s.srv.cfg
	switch {
	case len(data) != 0:
		return s.replyErr(optStartTLS, repErrInvalid, "NBD_OPT_STARTTLS takes no data")
	case cfg.TLS == nil:
		return s.replyErr(optStartTLS, repErrPolicy, "TLS is not configured on this server")
	case s.tlsOn:
		return s.replyErr(optStartTLS, repErrInvalid, "TLS is already on")
	}
	if err := s.reply(optStartTLS, repAck, nil); err != nil {
		return err
	}
	tc := tls.Server(s.conn, cfg.TLS)
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	s.conn, s.tlsOn = tc, true
	return nil
}

// infoGo parses NBD_OPT_INFO / NBD_OPT_GO: name length, name, and a list of
// requested info types.
func (s *session) infoGo(opt uint32, data []byte) (bool, error) {
	if len(data) < 6 {
		return false, s.replyErr(opt, repErrInvalid, "option data too short")
	}
	nl := binary.BigEndian.Uint32(data)
	if uint64(nl) > uint64(len(data)-6) || nl > maxNameLen {
		return false, s.replyErr(opt, repErrInvalid, "export name length out of range")
	}
	name := string(data[4 : 4+nl])
	rest := data[4+nl:]
	nreq := int(binary.BigEndian.Uint16(rest))
	if len(rest) != 2+2*nreq {
		return false, s.replyErr(opt, repErrInvalid, "information request count does not match the data length")
	}
	exp, err := s.srv.cfg.Exports.Lookup(name)
	if err != nil {
		return false, s.replyErr(opt, repErrUnknown, err.Error())
	}
	if err := s.sendInfo(opt, exp, name, rest[2:]); err != nil {
		return false, err
	}
	if err := s.reply(opt, repAck, nil); err != nil {
		return false, err
	}
	if opt == optGo {
		s.export, s.name = exp, name
		return true, nil
	}
	return false, nil
}

func (s *session) sendInfo(opt uint32, exp Export, name string, reqs []byte) error {
	b := binary.BigEndian.AppendUint16(nil, infoExport)
	b = binary.BigEndian.AppendUint64(b, exp.Size())
	b = binary.BigEndian.AppendUint16(b, serverTFlags)
	if err := s.reply(opt, repInfo, b); err != nil {
		return err
	}
	b = binary.BigEndian.AppendUint16(nil, infoBlockSize)
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint32(b, 4096)
	b = binary.BigEndian.AppendUint32(b, MaxPayload)
	if err := s.reply(opt, repInfo, b); err != nil {
		return err
	}
	for i := 0; i+1 < len(reqs); i += 2 {
		if binary.BigEndian.Uint16(reqs[i:]) == infoName {
			b = binary.BigEndian.AppendUint16(nil, infoName)
			if err := s.reply(opt, repInfo, append(b, name...)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *session) reply(opt, typ uint32, data []byte) error {
	b := make([]byte, 20, 20+len(data))
	binary.BigEndian.PutUint64(b[0:], optReplyMagic)
	binary.BigEndian.PutUint32(b[8:], opt)
	binary.BigEndian.PutUint32(b[12:], typ)
	binary.BigEndian.PutUint32(b[16:], uint32(len(data)))
	_, err := s.conn.Write(append(b, data...))
	return err
}

func (s *session) replyErr(opt, typ uint32, msg string) error {
	return s.reply(opt, typ, []byte(msg))
}
