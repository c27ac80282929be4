package session

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// migrate brings entries read from a file of version v up to version 3, in memory
// (SPEC §5.3). It returns the entries to index; the raw JSON of changed entries is
// rewritten so that a later whole-file rewrite writes the migrated form.
//
// Version 1 entries get ids derived from the session id and their position, so
// that the same file always shows the same ids (pi draws random ones; a user could
// not then name an entry of an old file twice in a row).
//
// pos[i] is entries[i]'s index among the file's parsed lines, the header being 0.
func migrate(h *Header, entries []*Entry, pos []int, v int) []*Entry {
	if v < 2 {
		entries = migrateV1(h, entries, pos)
	}
	if v < 3 {
		for i, e := range entries {
			if e.Type == TypeMessage && e.msgRole() == "hookMessage" {
				entries[i] = renameHookMessage(e)
			}
		}
	}
	return entries
}

func migrateV1(h *Header, entries []*Entry, pos []int) []*Entry {
	used := make(map[string]bool, len(entries))
	ids := make([]string, len(entries))
	byPos := make(map[int]string, len(entries))
	for i := range entries {
		ids[i] = derivedID(h.ID, i, used)
		byPos[pos[i]] = ids[i]
	}
	out := make([]*Entry, 0, len(entries))
	prev := ""
	for i, e := range entries {
		ms, err := objectMembers(e.raw)
		if err != nil {
			continue // validated already; cannot happen
		}
		rest := without(ms, "type", "id", "parentId")
		if e.Type == TypeCompaction {
			rest = convertFirstKept(rest, byPos)
		}
		head := []member{{"type", mustValue(e.Type)}, {"id", mustValue(ids[i])}}
		if prev == "" {
			head = append(head, member{"parentId", jsontext.Value("null")})
		} else {
			head = append(head, member{"parentId", mustValue(prev)})
		}
		ne := *e
		ne.ID, ne.ParentID = ids[i], prev
		ne.setRaw(buildObject(append(head, rest...)))
		out = append(out, &ne)
		prev = ids[i]
	}
	return out
}

// convertFirstKept replaces a v1 compaction's firstKeptEntryIndex (an index
// into the file's parsed lines, the header being 0) with firstKeptEntryId, as
// pi does: an index that is a number is removed, and becomes an id only when it
// names an entry; anything else is left as it is.
func convertFirstKept(ms []member, byPos map[int]string) []member {
	out := make([]member, 0, len(ms))
	var keptID string
	for _, m := range ms {
		if m.name != "firstKeptEntryIndex" || m.value.Kind() != '0' {
			out = append(out, m)
			continue
		}
		var idx float64
		if unmarshal(m.value, &idx) == nil && idx == float64(int(idx)) {
			keptID = byPos[int(idx)]
		}
	}
	if keptID == "" {
		return out
	}
	// pi assigns firstKeptEntryId: an existing member keeps its place.
	for i := range out {
		if out[i].name == "firstKeptEntryId" {
			out[i].value = mustValue(keptID)
			return out
		}
	}
	return append(out, member{"firstKeptEntryId", mustValue(keptID)})
}

func derivedID(sessionID string, i int, used map[string]bool) string {
	for n := 0; ; n++ {
		sum := sha256.Sum256([]byte(sessionID + "/" + strconv.Itoa(i) + "/" + strconv.Itoa(n)))
		id := hex.EncodeToString(sum[:4])
		if !used[id] {
			used[id] = true
			return id
		}
	}
}

func renameHookMessage(e *Entry) *Entry {
	ms, err := objectMembers(e.raw)
	if err != nil {
		return e
	}
	for i, m := range ms {
		if m.name != "message" {
			continue
		}
		inner, err := objectMembers(m.value)
		if err != nil {
			return e
		}
		for j := range inner {
			if inner[j].name == "role" {
				inner[j].value = mustValue(RoleCustom)
			}
		}
		ms[i].value = buildObject(inner)
	}
	ne := *e
	ne.sub = RoleCustom
	ne.setRaw(buildObject(ms))
	return &ne
}

// MigratedHeader returns the header's JSON with its version set to the current
// one, every other field kept, for the rewrite of a migrated file.
func MigratedHeader(h Header) []byte {
	ms, err := objectMembers(h.raw)
	if err != nil {
		h.Version = CurrentVersion
		return encodeHeader(h)
	}
	v := mustValue(CurrentVersion)
	for i := range ms {
		if ms[i].name == "version" {
			ms[i].value = v
			return buildObject(ms)
		}
	}
	out := append([]member{ms[0], {"version", v}}, ms[1:]...)
	return buildObject(out)
}
