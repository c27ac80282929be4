package session

// AsMessage returns the message an entry stands for when a summarizer reads it
// (pi's getMessageFromEntry in its compaction and branch summarization code): a
// message entry's message as stored; a custom_message as a custom message; a
// branch_summary as a branchSummary message, even when its summary is empty (the
// context leaves those out, the summarizers do not); a compaction as a
// compactionSummary message. Other entries stand for no message.
func (e *Entry) AsMessage() (ContextMessage, bool) {
	switch e.Type {
	case TypeMessage, TypeCustomMessage:
		var ctx Context
		ctx.add(e)
		if len(ctx.Messages) == 0 {
			return ContextMessage{}, false
		}
		return ctx.Messages[0], true
	case TypeBranchSummary:
		ms, err := objectMembers(e.raw)
		if err != nil {
			return ContextMessage{}, false
		}
		summary, _ := find(ms, "summary")
		from, _ := find(ms, "fromId")
		return ContextMessage{Role: RoleBranchSummary, Entry: e, Raw: buildObject(omitEmpty([]member{
			{"role", mustValue(RoleBranchSummary)}, {"summary", summary}, {"fromId", from}, {"timestamp", jsMillis(e.Timestamp)},
		}))}, true
	case TypeCompaction:
		ms, err := objectMembers(e.raw)
		if err != nil {
			return ContextMessage{}, false
		}
		summary, _ := find(ms, "summary")
		tokens, _ := find(ms, "tokensBefore")
		return ContextMessage{Role: RoleCompactionSummary, Entry: e, Raw: buildObject(omitEmpty([]member{
			{"role", mustValue(RoleCompactionSummary)}, {"summary", summary}, {"tokensBefore", tokens}, {"timestamp", jsMillis(e.Timestamp)},
		}))}, true
	}
	return ContextMessage{}, false
}
