-- Quick replies (issue 43 item 4): a tenant's reply templates, managed by operators on the
-- Settings page and inserted into the inbox composer with one click or a `/` filter. A title is
-- unique per tenant (case-insensitive), so `/title` picks one template.
create table quick_replies (
  id         uuid primary key default gen_random_uuid(),
  tenant_id  text not null,
  title      text not null,
  text       text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index quick_replies_title on quick_replies (tenant_id, lower(title));
