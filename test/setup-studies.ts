// Tests that call the engine directly see every study registered, as every `panta` command does.
import '@panta/studies';
