-- The router is a system branch "_router" managed in Настройки with versions like any branch
-- (seed 003; issue 14 item 8). Its config is {title, system_prompt}; version 1 is the prompt that
-- was hard-coded in clinic/prompt.ts (routerSystemPrompt), for every tenant that already has
-- clinic settings. New tenants get it with the rest of the seed on their first request.
alter table clinic_branches drop constraint if exists clinic_branches_code_check;
alter table clinic_branches add constraint clinic_branches_code_check
  check (code in ('new_booking', 'price_question', 'general_info', 'medical_question', 'reschedule', 'escalate_human', '_router'));

insert into clinic_branches (tenant_id, code, version, active, config)
select t.tenant_id, '_router', 1, true, '{"title":"Маршрутизатор","system_prompt":"Ты — маршрутизатор чата медицинской клиники. По последней реплике пациента (с учётом истории) определи тему.\nОтветь ровно одним кодом намерения, без пояснений:\n- new_booking — пациент хочет записаться на приём или продолжает запись (имя, жалоба, время, подтверждение)\n- price_question — вопрос о стоимости приёма, анализов, процедур\n- general_info — часы работы, адрес, проезд, парковка, какие услуги есть или нет\n- medical_question — медицинский вопрос о симптомах, подготовке к анализам, лечении\n- reschedule — перенос или отмена уже существующей записи\n- escalate_human — просит живого человека, острое состояние, операция, агрессия"}'::jsonb
from (select distinct tenant_id from clinic_branches) t
where not exists (select 1 from clinic_branches b where b.tenant_id = t.tenant_id and b.code = '_router');
