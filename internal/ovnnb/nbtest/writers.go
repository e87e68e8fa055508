package nbtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Writers counts the committed transactions in the NB database file by
// the writer named in their OVSDB comment ("nqos-controller <id>"); other
// writers (ovn-nbctl) are not counted.
func Writers(dbFile string) (map[string]int, error) {
	f, err := os.Open(dbFile)
	if err != nil {
		return nil, fmt.Errorf("NB database: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	out := map[string]int{}
	for rec := 0; ; rec++ {
		header, err := r.ReadString('\n')
		if errors.Is(err, io.EOF) && header == "" {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s record %d header: %w", dbFile, rec, err)
		}
		fields := strings.Fields(header)
		if len(fields) != 4 || fields[0] != "OVSDB" || fields[1] != "JSON" {
			return nil, fmt.Errorf("%s record %d: header %q is not OVSDB JSON <length> <sha1>", dbFile, rec, header)
		}
		n, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s record %d length: %w", dbFile, rec, err)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("%s record %d body: %w", dbFile, rec, err)
		}
		var txn struct {
			Comment string `json:"_comment"`
		}
		if rec > 0 { // record 0 is the schema
			if err := json.Unmarshal(body, &txn); err != nil {
				return nil, fmt.Errorf("%s record %d: %w", dbFile, rec, err)
			}
			if id, ok := strings.CutPrefix(txn.Comment, "nqos-controller "); ok {
				out[id]++
			}
		}
		if b, err := r.ReadByte(); err == nil && b != '\n' {
			_ = r.UnreadByte()
		}
	}
}

// Writers counts the committed transactions of this server's database
// by writer, as the package function does.
func (s *Server) Writers() (map[string]int, error) { return Writers(s.db) }
