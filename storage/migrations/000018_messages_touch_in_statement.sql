-- A conversation's last activity moves in the statement that appends its messages
-- (storage/messages.ts messagesInsert, the one place messages are inserted), together with a
-- reopening when there is one: one row update per append. The statement-level trigger of 000010
-- cost a PL/pgSQL call, a transition table and a separate update on every turn (≈ 7% of the
-- database CPU of a clinic turn under load, perf).
drop trigger if exists messages_touch_conversation on messages;
drop function if exists conversations_touch();
