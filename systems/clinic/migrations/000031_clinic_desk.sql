-- The clinic's front desk (issue 43): its working hours and time zone decide what an escalation
-- reply promises (not «в течение ближайшего часа» at 3 a.m.), and how long a held thread's patient
-- waits before the holding reply is repeated. One row per tenant; no row: the defaults
-- (systems/clinic/desk.ts).
create table clinic_desk_settings (
  tenant_id  text primary key,
  settings   jsonb not null,
  updated_at timestamptz not null default now()
);
