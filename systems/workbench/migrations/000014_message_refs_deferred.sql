-- Erasing a Workbench conversation (DELETE /v1/inbox/conversations/:id, one cascading delete)
-- failed with a foreign-key violation once a clarification or an interaction referred to one of
-- its messages: the cascade deletes the messages before the clarifications (conversation →
-- interactions → clarifications) that point at them, and these references were checked at once,
-- in between. Checked at commit instead, by which time the whole conversation is gone; deleting a
-- message that something still refers to is refused as before, only at the end of its transaction.
alter table clarifications alter constraint clarifications_question_message_id_fkey deferrable initially deferred;
alter table clarifications alter constraint clarifications_answer_message_id_fkey deferrable initially deferred;
alter table interactions alter constraint interactions_root_message_id_fkey deferrable initially deferred;
