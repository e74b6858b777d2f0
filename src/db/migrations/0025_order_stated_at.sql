-- Issue 35, one clock per column: an intent's time on the exchange's clock, the close time of the bar whose
-- close stated it (a protective exit's: its fill). A pending order then shows the exchange's time before it
-- fills as after (filled_at). Null for rows written before, and for a pause's close (no bar states it).
ALTER TABLE strategy_orders ADD COLUMN stated_at timestamptz;
